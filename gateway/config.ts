import { ConfigError, integer, optional, servicePort, type Env } from "../lib/config.ts";
import type { UploadLimits } from "./upload.ts";
import { DEFAULT_STAGE_INLINE_MAX_BYTES } from "../lib/pipeline/stage-payloads.ts";

export interface GatewayConfig {
  port: number;
  host: string;
  limits: UploadLimits;
  corsOrigins: string[];
  /** QUARRY_API_KEY: a bootstrap admin key that exists only in the configuration. */
  apiKey?: string;
  /** --insecure (QUARRY_INSECURE=1): serve a non-loopback address with no key. */
  insecure: boolean;
  /** QUARRY_CONSOLE_DIR: the built console served at / (default console/dist). */
  consoleDir?: string;
  /** QUARRY_SOURCE_TICK_MS: how often the schedule looks for sources due a sync (default 10 s). */
  sourceTickMs: number;
  /** QUARRY_TRACE_VIEWER_URL: a trace's page with "{trace_id}" in it (Jaeger: http://host:16686/trace/{trace_id}); "" when unset. */
  traceViewerUrl: string;
}

export function gatewayConfig(env: Env): GatewayConfig {
  const kafka = Boolean(optional(env, "KAFKA_BROKERS"));
  return {
    port: servicePort(env, "gateway"),
    host: optional(env, "QUARRY_HOST") ?? "127.0.0.1",
    limits: {
      maxUploadBytes: integer(env, "QUARRY_MAX_UPLOAD_BYTES", 50 * 1024 * 1024),
      // Kafka's default message limit is 1 MiB. The SQLite log has no such limit, but a large event is
      // copied and decoded on the main thread by every stage that reads it (docs/benchmarks/stall.md),
      // so it takes the stage outputs' threshold: above it the bytes travel by reference.
      inlineMaxBytes: integer(env, "QUARRY_INLINE_MAX_BYTES", kafka ? 512 * 1024 : DEFAULT_STAGE_INLINE_MAX_BYTES),
    },
    // No cross-origin access unless origins are listed: a page a user visits must not drive a local Quarry.
    corsOrigins: (optional(env, "QUARRY_CORS_ORIGINS") ?? "").split(",").map((o) => o.trim()).filter(Boolean),
    apiKey: optional(env, "QUARRY_API_KEY"),
    insecure: optional(env, "QUARRY_INSECURE") === "1",
    consoleDir: optional(env, "QUARRY_CONSOLE_DIR"),
    sourceTickMs: integer(env, "QUARRY_SOURCE_TICK_MS", 10_000),
    traceViewerUrl: traceViewerUrl(env),
  };
}

function traceViewerUrl(env: Env): string {
  const url = optional(env, "QUARRY_TRACE_VIEWER_URL") ?? "";
  if (url && !url.includes("{trace_id}")) {
    throw new ConfigError(`QUARRY_TRACE_VIEWER_URL must say where the trace id goes with {trace_id}, e.g. http://localhost:16686/trace/{trace_id}; it is ${url}`);
  }
  return url;
}
