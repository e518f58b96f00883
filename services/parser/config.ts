import { integer, optional, ServicePorts, type Env } from "../../lib/config.ts";
import { DEFAULT_PARSE_LIMITS, type ParseLimits } from "./parse-limits.ts";

export interface ParserConfig {
  port: number;
  /** Apache Tika server; when unset only the built-in parsers run. */
  tikaUrl?: string;
  tikaTimeoutMs: number;
  limits: ParseLimits;
  /** Threads the built-in parsers run on, one document each. */
  threads: number;
}

export function parserConfig(env: Env): ParserConfig {
  return {
    port: integer(env, "QUARRY_PARSER_PORT", ServicePorts.parser),
    tikaUrl: optional(env, "TIKA_URL"),
    tikaTimeoutMs: integer(env, "QUARRY_TIKA_TIMEOUT_MS", 120_000),
    limits: {
      maxDocumentChars: integer(env, "QUARRY_MAX_DOCUMENT_CHARS", DEFAULT_PARSE_LIMITS.maxDocumentChars),
      timeoutMs: integer(env, "QUARRY_PARSE_TIMEOUT_MS", DEFAULT_PARSE_LIMITS.timeoutMs),
      memoryMb: integer(env, "QUARRY_PARSE_MEMORY_MB", DEFAULT_PARSE_LIMITS.memoryMb),
    },
    threads: Math.max(1, integer(env, "QUARRY_PARSER_THREADS", 2)),
  };
}
