// The gateway's door: every call to the public API is authenticated (API key, or nobody on a
// Quarry with no key), then allowed by its method's rule in access-rules.ts. gRPC health and
// reflection stay open, as load balancers and tools call them without credentials; a service
// without rules is refused. Errors are domain errors: the edge interceptor maps them to
// UNAUTHENTICATED (HTTP 401) and PERMISSION_DENIED (403).
import type { Interceptor } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { roleAllows } from "../../lib/auth/api-key.ts";
import { PermissionDeniedError } from "../../lib/errors.ts";
import { PUBLIC_SERVICE, ruleFor, type AccessRule, type Targets } from "./access-rules.ts";
import type { ApiKeyAuthenticator } from "./authenticator.ts";
import { isScoped, PRINCIPAL, type Principal } from "./principal.ts";

const OPEN_SERVICES = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]);

export interface AccessDeps {
  authenticator: ApiKeyAuthenticator;
  index: Pick<Client<typeof IndexService>, "getKnowledgeBase" | "getDocument" | "getAssistant" | "getConversation" | "getTurn">;
}

// One message for "not in scope" and "does not exist": a scoped key must not learn what other tenants have.
const OUT_OF_SCOPE = (who: Principal) => new PermissionDeniedError(`the API key "${who.name}" is limited to other knowledge bases`);

/** Whether every base and document `targets` names is in the scoped caller's scope; PermissionDenied otherwise. */
export type ScopeCheck = (who: Principal, targets: Targets) => Promise<void>;

export function scopeCheck(index: AccessDeps["index"]): ScopeCheck {
  return async (who, targets) => {
    if (targets.unbounded) throw new PermissionDeniedError(`the API key "${who.name}" is limited to knowledge bases: name them`);
    const allowed = new Set(who.knowledgeBaseIds);
    // Each target stands for the bases it reaches; undefined when it does not exist.
    const reached = await Promise.all([
      ...(targets.knowledgeBases ?? []).map((name) => index.getKnowledgeBase({ knowledgeBase: name }).then((r) => r.knowledgeBase && [r.knowledgeBase.id], notFound)),
      ...(targets.documents ?? []).map((id) => index.getDocument({ documentId: id }).then((r) => r.document && [r.document.knowledgeBaseId], notFound)),
      ...(targets.assistants ?? []).map((a) => index.getAssistant({ assistant: a }).then((r) => r.assistant?.knowledgeBases.map((m) => m.knowledgeBase), notFound)),
      ...(targets.conversations ?? []).map((id) =>
        index.getConversation({ conversationId: id }).then((r) => r.conversation?.knowledgeBaseIds, notFound),
      ),
      ...(targets.turns ?? []).map((id) => index.getTurn({ turnId: id }).then((r) => r.turn?.provenance?.knowledgeBaseIds, notFound)),
    ]);
    if (reached.some((ids) => !ids || ids.length === 0 || ids.some((id) => !allowed.has(id)))) throw OUT_OF_SCOPE(who);
  };
}

export interface AccessOptions {
  /**
   * Who is calling. By default the call's `authorization` header, checked by the authenticator; the
   * gateway's own HTTP routes, which authenticated their caller at their door, call in process and
   * name that caller instead (gateway/access/in-process-caller.ts).
   */
  identify?: (request: { header: Headers; url: string }) => Promise<Principal>;
}

export function accessInterceptor(deps: AccessDeps, options: AccessOptions = {}): Interceptor {
  const inScope = scopeCheck(deps.index);
  const identify = options.identify ?? ((request) => deps.authenticator.authenticate(request.header.get("authorization"), hostOf(request.url)));
  return (next) => async (request) => {
    const service = request.service.typeName;
    if (OPEN_SERVICES.has(service)) return next(request);
    const rule: AccessRule | undefined = service === PUBLIC_SERVICE ? ruleFor(request.method.localName) : undefined;
    if (!rule) throw new PermissionDeniedError(`${service}/${request.method.name} has no access rule, so nobody may call it`);

    const who = await identify(request);
    request.contextValues.set(PRINCIPAL, who);
    if (!roleAllows(who.role, rule.role)) {
      throw new PermissionDeniedError(`the API key "${who.name}" has the ${who.role} role; ${request.method.name} needs ${rule.role}`);
    }
    if (!isScoped(who)) return next(request);
    if (rule.scoped === "deny") throw new PermissionDeniedError(`the API key "${who.name}" is limited to knowledge bases and cannot call ${request.method.name}`);

    const check = (message: unknown) => (rule.targets ? inScope(who, rule.targets(message as never)) : Promise.resolve());
    if (!request.stream) {
      await check(request.message);
    } else {
      const source = request.message;
      request = {
        ...request,
        message: (async function* () {
          for await (const message of source) {
            await check(message);
            yield message;
          }
        })(),
      };
    }
    const response = await next(request);
    if (rule.scoped === "filter" && rule.filter && !response.stream) rule.filter(response.message as never, new Set(who.knowledgeBaseIds));
    return response;
  };
}

export function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

function notFound(error: unknown): undefined {
  if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
  throw error;
}
