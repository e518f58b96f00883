// The shared secret between Quarry's own services (QUARRY_INTERNAL_TOKEN): in distributed mode the
// parser, chunker, embedder, index and answer services accept a call only when it carries the
// token, and every service's clients send it. The gateway's public API uses API keys instead.
// gRPC health and reflection stay open for orchestrators' probes.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import { optional, type Env } from "../config.ts";
import { UnauthenticatedError } from "../errors.ts";

const OPEN_SERVICES = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]);
const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

export function internalToken(env: Env): string | undefined {
  return optional(env, "QUARRY_INTERNAL_TOKEN");
}

/** Server side: refuses calls without the token (UNAUTHENTICATED), except health and reflection. */
export function requireInternalToken(token: string): Interceptor {
  const expected = digest(token);
  return (next) => async (request) => {
    if (OPEN_SERVICES.has(request.service.typeName)) return next(request);
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(request.header.get("authorization") ?? "")?.[1];
    // Compared as digests: constant time, whatever the lengths.
    if (!presented || !timingSafeEqual(digest(presented), expected)) {
      throw new UnauthenticatedError("this is an internal Quarry service: calls need QUARRY_INTERNAL_TOKEN");
    }
    return next(request);
  };
}

/** Client side: sends the token on every call (none when no token is configured). */
export function sendInternalToken(token: string | undefined): Interceptor[] {
  if (!token) return [];
  return [
    (next) => (request) => {
      request.header.set("authorization", `Bearer ${token}`);
      return next(request);
    },
  ];
}
