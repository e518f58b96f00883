// The gateway's door: every call to the public API is authenticated (API key, or nobody on a
// Quarry with no key), then allowed by its method's rule in access-rules.ts. gRPC health and
// reflection stay open, as load balancers and tools call them without credentials; a service
// without rules is refused. What a scoped key names is checked by scope.ts, which answers an object
// out of scope as if it did not exist. Errors are domain errors: the edge interceptor maps them to
// UNAUTHENTICATED (HTTP 401), PERMISSION_DENIED (403) and NOT_FOUND (404).
import type { Interceptor } from "@connectrpc/connect";
import { roleAllows } from "../../lib/auth/api-key.ts";
import { PermissionDeniedError } from "../../lib/errors.ts";
import { PUBLIC_SERVICE, ruleFor, type AccessRule } from "./access-rules.ts";
import type { ApiKeyAuthenticator } from "./authenticator.ts";
import { isScoped, PRINCIPAL, type Principal } from "./principal.ts";
import { Scope, type ScopeLookups, type Targets } from "./scope.ts";

const OPEN_SERVICES = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]);

export interface AccessDeps {
  authenticator: ApiKeyAuthenticator;
  index: ScopeLookups;
}

/** Whether every object `targets` names is in the scoped caller's scope (scope.ts); NOT_FOUND, as if missing, otherwise. */
export type ScopeCheck = (who: Principal, targets: Targets) => Promise<void>;

export function scopeCheck(index: ScopeLookups): ScopeCheck {
  const scope = new Scope(index);
  return (who, targets) => scope.check(who, targets);
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

