// Who is calling: a stored key, the bootstrap key, or nobody on a Quarry that has no keys yet.
import type { ApiKeyRole } from "../../lib/auth/api-key.ts";

export interface Principal {
  /** For messages and logs; never the secret. */
  name: string;
  role: ApiKeyRole;
  /** Empty: every knowledge base. Otherwise the ids this caller may see and touch. */
  knowledgeBaseIds: string[];
}

export const isScoped = (p: Principal) => p.knowledgeBaseIds.length > 0;

/** A Quarry with no key at all serves everyone as admin, on loopback only (see bind-policy.ts). */
export const OPEN_ACCESS: Principal = { name: "anyone (no API keys are configured)", role: "admin", knowledgeBaseIds: [] };

export const BOOTSTRAP: Principal = { name: "QUARRY_API_KEY", role: "admin", knowledgeBaseIds: [] };
