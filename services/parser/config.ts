import { integer, optional, optionalUrl, ServicePorts, type Env } from "../../lib/config.ts";

export interface ParserConfig {
  port: number;
  /** Apache Tika server; when unset only the built-in parsers run. */
  tikaUrl?: string;
  tikaTimeoutMs: number;
}

export function parserConfig(env: Env): ParserConfig {
  return {
    port: integer(env, "QUARRY_PARSER_PORT", ServicePorts.parser),
    tikaUrl: optionalUrl(env, "TIKA_URL"),
    tikaTimeoutMs: integer(env, "QUARRY_TIKA_TIMEOUT_MS", 120_000),
  };
}
