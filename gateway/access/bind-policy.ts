// Safe defaults for where the gateway listens: a Quarry without any API key answers everyone, so it
// may listen only on a loopback address, unless the operator says --insecure out loud.
import { ConfigError } from "../../lib/config.ts";
import type { Logger } from "../../lib/logger.ts";
import { isLoopback } from "../../lib/rpc/loopback.ts";

export { isLoopback };

/** Refuses (ConfigError) to expose a Quarry without keys; says at start-up when it serves without credentials. */
export async function checkBindPolicy(options: {
  host: string;
  insecure: boolean;
  keysConfigured: () => Promise<boolean>;
  logger: Logger;
  /** How long to keep asking an index that does not answer yet, when the answer decides whether to start. */
  waitMs?: number;
}): Promise<void> {
  const { host, logger } = options;
  const loopback = isLoopback(host);
  let keys: boolean;
  try {
    keys = await (loopback || options.insecure ? options.keysConfigured() : askPatiently(options.keysConfigured, options.waitMs ?? 30_000));
  } catch (error) {
    // Calls are authenticated one by one anyway; here only exposing a Quarry that may have no key is at stake.
    if (loopback || options.insecure) {
      logger.warn({ host, err: error }, "cannot tell yet whether any API key exists; calls without a key are served only while none does");
      return;
    }
    throw new ConfigError(`cannot tell whether any API key exists (${(error as Error).message}), so refusing to serve on ${host}`);
  }
  if (keys) return;
  if (loopback) {
    logger.warn({ host }, "no API keys are configured: serving without credentials, on this loopback address only (create one with `quarry keys create` or set QUARRY_API_KEY)");
    return;
  }
  if (!options.insecure) {
    throw new ConfigError(
      `refusing to serve on ${host} without an API key: set QUARRY_API_KEY (or create a key with \`quarry keys create\` on a loopback server first), or pass --insecure`,
    );
  }
  logger.warn({ host }, "--insecure: serving on a non-loopback address with no API key; anyone who can reach it can read and delete every knowledge base");
}

// Distributed services may start in any order: give the index a moment before deciding.
async function askPatiently(ask: () => Promise<boolean>, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await ask();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((r) => setTimeout(r, Math.min(1_000, Math.max(0, deadline - Date.now()))));
    }
  }
}
