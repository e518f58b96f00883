// Turns the `authorization: Bearer <key>` of a call into a Principal. Keys live in the index's
// catalog store; a verified key is remembered for a few seconds so that not every call costs a
// round trip to the index (a revocation made through this gateway applies at once, one made
// through another gateway within cacheMs).
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { apiKeyIdOf, hashApiKey, sameHash } from "../../lib/auth/api-key.ts";
import { apiKeyFromProto } from "../../lib/auth/api-key-convert.ts";
import { ErrorReasons, UnauthenticatedError } from "../../lib/errors.ts";
import { isLoopback } from "../../lib/rpc/loopback.ts";
import { BOOTSTRAP, OPEN_ACCESS, type Principal } from "./principal.ts";

export interface AuthenticatorOptions {
  index: Pick<Client<typeof IndexService>, "authenticateApiKey" | "listApiKeys">;
  /** QUARRY_API_KEY: an admin key that exists only in this process's configuration. */
  bootstrapKey?: string;
  /** Whether a Quarry with no key at all lets calls without credentials through (loopback or --insecure). */
  openWithoutKeys: boolean;
  /**
   * Serve those calls only when they name a loopback host (Host / :authority): a web page that
   * rebinds its own domain to 127.0.0.1 is same-origin to the browser, so CORS cannot stop it, but
   * its requests still carry its own domain. True unless --insecure.
   */
  openOnlyToLoopbackHosts?: boolean;
  cacheMs?: number;
  now?: () => number;
}

const MISSING = "this Quarry needs an API key: send `authorization: Bearer <key>` (quarry --api-key or QUARRY_API_KEY)";
const INVALID = "the API key is not valid (unknown, revoked or mistyped)";

export class ApiKeyAuthenticator {
  private readonly cacheMs: number;
  private readonly now: () => number;
  private readonly bootstrapHash: string | undefined;
  private readonly verified = new Map<string, { principal: Principal; until: number }>();
  private keysKnown: { any: boolean; until: number } | undefined;

  constructor(private readonly options: AuthenticatorOptions) {
    this.cacheMs = options.cacheMs ?? 5_000;
    this.now = options.now ?? Date.now;
    this.bootstrapHash = options.bootstrapKey ? hashApiKey(options.bootstrapKey) : undefined;
  }

  /** Whether any key exists: the bootstrap key or one in the catalog. */
  async keysConfigured(): Promise<boolean> {
    if (this.bootstrapHash) return true;
    if (this.keysKnown && this.keysKnown.until > this.now()) return this.keysKnown.any;
    const { apiKeys } = await this.options.index.listApiKeys({});
    this.keysKnown = { any: apiKeys.length > 0, until: this.now() + this.cacheMs };
    return this.keysKnown.any;
  }

  /** Forgets what it remembered, after a key was created or revoked. */
  keysChanged(): void {
    this.verified.clear();
    this.keysKnown = undefined;
  }

  /** `host` is the host the call named (for the loopback-only open access); omit it when not known. */
  async authenticate(authorization: string | null, host?: string): Promise<Principal> {
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
    if (!presented) {
      if (authorization) throw new UnauthenticatedError("the authorization header must be `Bearer <key>`", { reason: ErrorReasons.apiKeyMalformed });
      if (this.options.openWithoutKeys && !(await this.keysConfigured())) {
        if (this.options.openOnlyToLoopbackHosts && host !== undefined && !isLoopback(host)) {
          throw new UnauthenticatedError(`without an API key this Quarry answers only requests addressed to localhost, not to ${host}`);
        }
        return OPEN_ACCESS;
      }
      throw new UnauthenticatedError(MISSING, { reason: ErrorReasons.apiKeyMissing });
    }
    const hash = hashApiKey(presented);
    if (this.bootstrapHash && sameHash(hash, this.bootstrapHash)) return BOOTSTRAP;
    const id = apiKeyIdOf(presented);
    if (!id) throw new UnauthenticatedError(INVALID);
    const cached = this.verified.get(hash);
    if (cached && cached.until > this.now()) return cached.principal;
    let principal: Principal;
    try {
      const { apiKey } = await this.options.index.authenticateApiKey({ keyId: id, keyHash: Buffer.from(hash, "hex") });
      const record = apiKeyFromProto(apiKey!);
      principal = { name: record.name, role: record.role, knowledgeBaseIds: record.knowledgeBaseIds };
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) throw new UnauthenticatedError(INVALID);
      throw error;
    }
    this.verified.set(hash, { principal, until: this.now() + this.cacheMs });
    return principal;
  }
}
