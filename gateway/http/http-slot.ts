// The gateway's plain-HTTP routes, on the port the Connect API serves (whatever the Connect router
// does not answer comes here; CORS is answered before either, lib/rpc/server.ts). Each guarded
// route passes the same door as a Connect call: the authenticator (API key, or nobody on a
// loopback Quarry without keys), the route's least role, and for a key limited to knowledge bases
// the route's scope check (access/access-interceptor.ts's, so a base out of scope and a base that
// does not exist look the same). Only then is the body read further or the handler run, with the
// caller's principal and the public API bound to that caller, so the access rules apply a second
// time to every call the route makes.
import { Code } from "@connectrpc/connect";
import { codeToHttpStatus, codeToString } from "@connectrpc/connect/protocol-connect";
import { roleAllows } from "../../lib/auth/api-key.ts";
import { InvalidInputError, PermissionDeniedError, TooLargeError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/logger.ts";
import { reasonOf, toConnectError } from "../../lib/rpc/error-mapping.ts";
import { hostOf, type ScopeCheck } from "../access/access-interceptor.ts";
import type { ApiKeyAuthenticator } from "../access/authenticator.ts";
import { isScoped, type Principal } from "../access/principal.ts";
import { isOpen, type GuardedRoute, type HttpCall, type HttpFailure, type HttpRoute, type NodeRequest, type NodeResponse } from "./http-route.ts";

export interface HttpSlotDeps {
  routes: readonly HttpRoute[];
  authenticator: Pick<ApiKeyAuthenticator, "authenticate">;
  checkScope: ScopeCheck;
  /** The public API and the embedder as `who`. */
  callsFor: (who: Principal) => Pick<HttpCall, "gateway" | "embedder">;
  /** Largest JSON body a route reads. */
  maxJsonBytes: number;
  logger: Logger;
  /** Aborted when the server shuts down: streaming routes end. */
  shutdown?: AbortSignal;
}

type Handler = (req: NodeRequest, res: NodeResponse) => void;

export function httpSlot(deps: HttpSlotDeps): Handler {
  const table = deps.routes.map((route) => ({ route, match: pathMatcher(route.path) }));
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://gateway");
    const found = table.map((t) => ({ route: t.route, params: t.match(url.pathname) })).filter((t) => t.params);
    // A route named by its own path answers (405 for another method) before a catch-all ("/*")
    // would; among equals, the first whose method fits.
    const exact = found.filter((t) => !t.route.path.endsWith("/*"));
    // A page a browser opens (it accepts HTML) whose path a route of another method holds is still
    // the console's: GET /retrieval is the retrieval test, where Dify POSTs. Any other client gets
    // the exact route's 405.
    const fitsMethod = (t: (typeof found)[number]) => t.route.methods.includes(req.method ?? "GET");
    const page = /\btext\/html\b/.test(String(req.headers.accept ?? ""));
    const hit = exact.find(fitsMethod) ?? (page || exact.length === 0 ? found.find(fitsMethod) : undefined) ?? exact[0] ?? found[0];
    if (!hit) {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
      res.end(`nothing is served at ${url.pathname}\n`);
      return;
    }
    const { route } = hit;
    if (isOpen(route)) return route.serve(req, res);
    if (!route.methods.includes(req.method ?? "GET")) {
      res.setHeader("Allow", route.methods.join(", "));
      return route.fail(res, { status: 405, code: "unimplemented", message: `${url.pathname} answers ${route.methods.join(" or ")}, not ${req.method}` });
    }
    serve(route, hit.params!, url, req, res, deps).catch((error) => {
      const failure = failureOf(error);
      if (failure.status >= 500) deps.logger.error({ route: route.name, err: error }, "http route failed");
      else deps.logger.info({ route: route.name, status: failure.status, reason: failure.message }, "http route refused");
      if (!res.headersSent) route.fail(res, failure);
      else res.end();
    });
  };
}

async function serve(route: GuardedRoute, params: Record<string, string>, url: URL, req: NodeRequest, res: NodeResponse, deps: HttpSlotDeps): Promise<void> {
  const principal = await deps.authenticator.authenticate(header(req, "authorization") ?? null, hostOf(`http://${header(req, "host") ?? header(req, ":authority") ?? ""}`));
  if (!roleAllows(principal.role, route.role)) {
    throw new PermissionDeniedError(`the API key "${principal.name}" has the ${principal.role} role; ${req.method} ${url.pathname} needs ${route.role}`);
  }
  const body = route.body === "json" ? await readJson(req, deps.maxJsonBytes) : undefined;
  const input = { params, query: url.searchParams, body };
  if (isScoped(principal) && route.scope.kind === "check") await deps.checkScope(principal, route.scope.targets(input));

  const gone = new AbortController();
  const abort = () => gone.abort(new Error("the client went away"));
  res.once("close", () => {
    if (!res.writableFinished) abort();
  });
  const signal = deps.shutdown ? AbortSignal.any([gone.signal, deps.shutdown]) : gone.signal;
  await route.handle({ ...input, req, res, principal, ...deps.callsFor(principal), signal });
}

/** Any error as a status, a code and a message (an unexpected error's message stays in the log). */
export function failureOf(error: unknown): HttpFailure {
  if (error instanceof TooLargeError) return { status: 413, code: "resource_exhausted", message: error.message };
  const mapped = toConnectError(error);
  const failure: HttpFailure = { status: codeToHttpStatus(mapped.code), code: codeToString(mapped.code), message: mapped.code === Code.Internal ? "internal error" : mapped.rawMessage };
  const reason = reasonOf(mapped);
  return reason ? { ...failure, reason } : failure;
}

async function readJson(req: NodeRequest, limit: number): Promise<unknown> {
  const declared = Number(header(req, "content-length") ?? NaN);
  if (declared > limit) throw new TooLargeError(`the request body is ${declared} bytes; this route reads at most ${limit}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new TooLargeError(`the request body is over ${limit} bytes, the most this route reads`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text.trim()) throw new InvalidInputError("the request needs a JSON body");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`the request body is not valid JSON: ${(error as Error).message}`);
  }
}

function header(req: NodeRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Params when the path fits the pattern, undefined otherwise. */
function pathMatcher(pattern: string): (path: string) => Record<string, string> | undefined {
  if (pattern.endsWith("/*")) {
    const prefix = pattern.slice(0, -1);
    return (path) => (path.startsWith(prefix) || path === prefix.slice(0, -1) ? {} : undefined);
  }
  const parts = pattern.split("/");
  return (path) => {
    const given = path.split("/");
    if (given.length !== parts.length) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < parts.length; i++) {
      if (parts[i].startsWith(":")) {
        if (!given[i]) return undefined;
        try {
          params[parts[i].slice(1)] = decodeURIComponent(given[i]);
        } catch {
          return undefined;
        }
      } else if (parts[i] !== given[i]) return undefined;
    }
    return params;
  };
}
