// What a plain-HTTP route on the gateway's port declares: where it answers, who may call it (the
// least role, and how a key limited to knowledge bases is checked), how its body is read, and how
// it writes a failure in its own surface's shape. The slot (http-slot.ts) runs the door for it —
// the same authenticator and scope checks as the Connect API — before the handler sees the request.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Client } from "@connectrpc/connect";
import type { EmbedderService } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import type { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import type { ApiKeyRole } from "../../lib/auth/api-key.ts";
import type { Targets } from "../access/access-rules.ts";
import type { Principal } from "../access/principal.ts";

export type NodeRequest = IncomingMessage | Http2ServerRequest;
export type NodeResponse = ServerResponse | Http2ServerResponse;

/** The public API as the route's caller: every call goes through the access rules as that caller. */
export type GatewayCalls = Client<typeof QuarryService>;

/** A failure for a person: the HTTP status, the Connect code's name ("invalid_argument") and why. */
export interface HttpFailure {
  status: number;
  code: string;
  message: string;
  /** The error's reason (lib/errors.ts ErrorReasons), for a surface whose error shape tells causes apart. */
  reason?: string;
}

/** Writes a failure in the surface's own error shape (OpenAI's, Dify's, Connect's JSON). */
export type FailureWriter = (res: NodeResponse, failure: HttpFailure) => void;

export interface RouteInput {
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body for `body: "json"` routes; undefined otherwise. */
  body: unknown;
}

/**
 * How a key limited to knowledge bases is checked:
 * - "check": the bases, documents or assistants the request names, before the handler runs;
 * - "per-call": the route's own gateway calls are checked one by one (listings come back filtered);
 * - "none": the route touches no knowledge base (why says so), so a scope does not apply.
 */
export type RouteScope = { kind: "check"; targets: (input: RouteInput) => Targets } | { kind: "per-call" } | { kind: "none"; why: string };

export interface HttpCall extends RouteInput {
  req: NodeRequest;
  res: NodeResponse;
  principal: Principal;
  gateway: GatewayCalls;
  embedder: Client<typeof EmbedderService>;
  /** Aborted when the client goes away or the server shuts down. */
  signal: AbortSignal;
}

interface RouteBase {
  /** A stable name, for logs and the access test's table. */
  name: string;
  methods: readonly string[];
  /** An exact path ("/v1/models"), with `:name` segments ("/v1/documents/:id"), or a prefix ending in "/*". */
  path: string;
}

export interface GuardedRoute extends RouteBase {
  role: ApiKeyRole;
  scope: RouteScope;
  /** "json": read (up to the JSON limit) and parsed before the scope check; "raw": left on the request for the handler (uploads, other protocols). */
  body: "json" | "raw" | "none";
  fail: FailureWriter;
  handle(call: HttpCall): Promise<void>;
}

/** A route anyone may call (the console's static files): `why` says why it needs no key. */
export interface OpenRoute extends RouteBase {
  open: string;
  serve(req: NodeRequest, res: NodeResponse): void;
}

export type HttpRoute = GuardedRoute | OpenRoute;

export const isOpen = (route: HttpRoute): route is OpenRoute => "open" in route;
