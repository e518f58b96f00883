// Safe defaults for where the gateway listens: a Quarry without any API key answers everyone, so it
// may listen only on a loopback address, unless the operator says --insecure out loud.
import { isIP } from "node:net";
import { ConfigError } from "../../lib/config.ts";
import type { Logger } from "../../lib/logger.ts";

export function isLoopback(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || /^::ffff:127\./.test(h);
  return false;
}

/** Refuses (ConfigError) to expose a Quarry without keys; says at start-up when it serves without credentials. */
export async function checkBindPolicy(options: { host: string; insecure: boolean; keysConfigured: () => Promise<boolean>; logger: Logger }): Promise<void> {
  const { host, logger } = options;
  const loopback = isLoopback(host);
  let keys: boolean;
  try {
    keys = await options.keysConfigured();
  } catch (error) {
    if (loopback || options.insecure) throw error;
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
