// A CA certificate file named by an environment variable, read once at start-up: a secured
// engine's TLS certificate is often signed by a private CA that Node does not know.
import { readFileSync } from "node:fs";
import { ConfigError, optional, type Env } from "./config.ts";

export function caFile(env: Env, variable: string): Buffer | undefined {
  const path = optional(env, variable);
  if (!path) return undefined;
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`${variable} names ${path}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** A user name and a password that only make sense together. */
export function credentialPair(env: Env, userVariable: string, passwordVariable: string): { username: string; password: string } | undefined {
  const username = optional(env, userVariable);
  const password = env[passwordVariable];
  if (!username && !password) return undefined;
  if (!username || !password) throw new ConfigError(`${userVariable} and ${passwordVariable} go together: set both or neither`);
  return { username, password };
}
