import { blobDir, integer, optional, optionalUrl, servicePort, type Env } from "../../lib/config.ts";
import { DEFAULT_PARSE_LIMITS, type ParseLimits } from "./parse-limits.ts";

export interface ParserConfig {
  port: number;
  /** Apache Tika server; when unset only the built-in parsers run. */
  tikaUrl?: string;
  tikaTimeoutMs: number;
  /**
   * Folders a documents.submitted content_uri may point into: the gateway's blob folder, and
   * QUARRY_FILE_REF_ROOT when set. Every other reference is refused and dead-lettered.
   */
  fileRefRoots: string[];
  limits: ParseLimits;
  /** Threads the built-in parsers run on, one document each. */
  threads: number;
}

export function parserConfig(env: Env): ParserConfig {
  return {
    port: servicePort(env, "parser"),
    tikaUrl: optionalUrl(env, "TIKA_URL"),
    tikaTimeoutMs: integer(env, "QUARRY_TIKA_TIMEOUT_MS", 120_000),
    fileRefRoots: [blobDir(env), ...(optional(env, "QUARRY_FILE_REF_ROOT") ? [optional(env, "QUARRY_FILE_REF_ROOT")!] : [])],
    limits: {
      maxDocumentChars: integer(env, "QUARRY_MAX_DOCUMENT_CHARS", DEFAULT_PARSE_LIMITS.maxDocumentChars),
      timeoutMs: integer(env, "QUARRY_PARSE_TIMEOUT_MS", DEFAULT_PARSE_LIMITS.timeoutMs),
      memoryMb: integer(env, "QUARRY_PARSE_MEMORY_MB", DEFAULT_PARSE_LIMITS.memoryMb),
    },
    threads: Math.max(1, integer(env, "QUARRY_PARSER_THREADS", 2)),
  };
}
