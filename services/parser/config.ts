import { blobDir, integer, optional, optionalUrl, servicePort, type Env } from "../../lib/config.ts";

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
}

export function parserConfig(env: Env): ParserConfig {
  return {
    port: servicePort(env, "parser"),
    tikaUrl: optionalUrl(env, "TIKA_URL"),
    tikaTimeoutMs: integer(env, "QUARRY_TIKA_TIMEOUT_MS", 120_000),
    fileRefRoots: [blobDir(env), ...(optional(env, "QUARRY_FILE_REF_ROOT") ? [optional(env, "QUARRY_FILE_REF_ROOT")!] : [])],
  };
}
