// API keys as the domain knows them: the three roles, the key format, and how a key is hashed.
//
// Why plain SHA-256 and not a slow KDF (scrypt, argon2): every key is 32 random bytes (256 bits)
// that Quarry generated itself, so there is nothing to guess and nothing a dictionary could find; a
// slow hash only protects low-entropy secrets such as passwords. A fast hash also lets the key be
// checked on every call without a per-request cost measured in tens of milliseconds. The one
// human-chosen secret, QUARRY_API_KEY, is never stored: it is compared in memory.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export type ApiKeyRole = "reader" | "editor" | "admin";
export const API_KEY_ROLES: readonly ApiKeyRole[] = ["reader", "editor", "admin"];

/** A key as stored and listed: never its secret. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  role: ApiKeyRole;
  /** Empty: every knowledge base. */
  knowledgeBaseIds: string[];
  createdAt: Date;
}

const PREFIX = "qk_";
const ID_HEX = 16;

/** A new key: its public id, the whole key to hand to the caller once, and the hash to store. */
export function newApiKey(): { id: string; key: string; hash: string } {
  const id = randomBytes(ID_HEX / 2).toString("hex");
  const key = `${PREFIX}${id}_${randomBytes(32).toString("base64url")}`;
  return { id, key, hash: hashApiKey(key) };
}

/** The public id inside a presented key, or undefined when it does not have Quarry's key shape. */
export function apiKeyIdOf(presented: string): string | undefined {
  const match = /^qk_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/.exec(presented);
  return match?.[1];
}

/** Hex SHA-256 of the whole key. */
export function hashApiKey(presented: string): string {
  return createHash("sha256").update(presented, "utf8").digest("hex");
}

/** Compares two hex hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** Whether a key of role `have` may make a call that needs role `need`. */
export function roleAllows(have: ApiKeyRole, need: ApiKeyRole): boolean {
  return API_KEY_ROLES.indexOf(have) >= API_KEY_ROLES.indexOf(need);
}
