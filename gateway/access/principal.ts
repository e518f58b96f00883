// Who is calling: a stored key, the bootstrap key, or nobody on a Quarry that has no keys yet.
import { createContextKey } from "@connectrpc/connect";
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

/** The caller, as the access interceptor authenticated it, for handlers that record who did what. */
export const PRINCIPAL = createContextKey<Principal | undefined>(undefined, { description: "the authenticated caller" });

/** A name to record as the author of a change; empty when Quarry has no keys (anyone is admin). */
export const authorName = (p: Principal | undefined) => (p && p !== OPEN_ACCESS ? p.name : "");
