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
import { isScoped, PRINCIPAL } from "./principal.ts";
import { Scope, type ScopeLookups } from "./scope.ts";

const OPEN_SERVICES = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]);

export interface AccessDeps {
  authenticator: ApiKeyAuthenticator;
  index: ScopeLookups;
}

export function accessInterceptor(deps: AccessDeps): Interceptor {
  const scope = new Scope(deps.index);

  return (next) => async (request) => {
    const service = request.service.typeName;
    if (OPEN_SERVICES.has(service)) return next(request);
    const rule: AccessRule | undefined = service === PUBLIC_SERVICE ? ruleFor(request.method.localName) : undefined;
    if (!rule) throw new PermissionDeniedError(`${service}/${request.method.name} has no access rule, so nobody may call it`);

    const who = await deps.authenticator.authenticate(request.header.get("authorization"), hostOf(request.url));
    request.contextValues.set(PRINCIPAL, who);
    if (!roleAllows(who.role, rule.role)) {
      throw new PermissionDeniedError(`the API key "${who.name}" has the ${who.role} role; ${request.method.name} needs ${rule.role}`);
    }
    if (!isScoped(who)) return next(request);
    if (rule.scoped === "deny") throw new PermissionDeniedError(`the API key "${who.name}" is limited to knowledge bases and cannot call ${request.method.name}`);

    const check = (message: unknown) => (rule.targets ? scope.check(who, rule.targets(message as never)) : Promise.resolve());
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

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

