import { integer, optional, servicePort, type Env } from "../../lib/config.ts";

export interface ParserConfig {
  port: number;
  /** Apache Tika server; when unset only the built-in parsers run. */
  tikaUrl?: string;
  tikaTimeoutMs: number;
}

export function parserConfig(env: Env): ParserConfig {
  return {
    port: servicePort(env, "parser"),
    tikaUrl: optional(env, "TIKA_URL"),
    tikaTimeoutMs: integer(env, "QUARRY_TIKA_TIMEOUT_MS", 120_000),
  };
}
