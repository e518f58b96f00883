// Leases in OpenSearch or Elasticsearch: a document per lease in one index, each change a write
// conditioned on the sequence number and primary term it read (if_seq_no / if_primary_term), so of
// two processes that read the same version, one write wins and the other gets a conflict. The
// engines' optimistic concurrency is what makes the lease safe across processes and machines; the
// engine-specific calls are the port's (engine-opensearch-lease-documents.ts,
// engine-elasticsearch-lease-documents.ts).
import { sleep } from "../backoff.ts";
import { UnavailableError } from "../errors.ts";
import type { LeaseRecord, LeaseStore } from "./lease-store.ts";

export interface VersionedLease {
  lease: LeaseRecord;
  seqNo: number;
  primaryTerm: number;
}

/** One engine's calls. Writes return false on a version conflict (another writer won) and throw otherwise. */
export interface LeaseDocuments {
  readonly engine: string;
  /** Creates the leases index unless it exists. */
  ensureIndex(): Promise<void>;
  read(name: string): Promise<VersionedLease | undefined>;
  create(name: string, lease: LeaseRecord): Promise<boolean>;
  replace(name: string, lease: LeaseRecord, version: VersionedLease): Promise<boolean>;
  remove(name: string, version: VersionedLease): Promise<boolean>;
  close(): Promise<void>;
}

export class DocumentLeaseStore implements LeaseStore {
  private ready: Promise<void> | undefined;
  private closed: Promise<void> | undefined;

  constructor(private readonly documents: LeaseDocuments) {}

  async acquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.call("take a lease", async () => {
      const current = await this.documents.read(name);
      const now = Date.now();
      const lease = { owner, expiresAt: now + ttlMs };
      if (!current) return this.documents.create(name, lease);
      if (current.lease.owner !== owner && current.lease.expiresAt >= now) return false;
      return this.documents.replace(name, lease, current);
    });
  }

  async renew(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.call("renew a lease", async () => {
      const current = await this.documents.read(name);
      if (current?.lease.owner !== owner) return false;
      return this.documents.replace(name, { owner, expiresAt: Date.now() + ttlMs }, current);
    });
  }

  async release(name: string, owner: string): Promise<void> {
    await this.call("release a lease", async () => {
      const current = await this.documents.read(name);
      // A conflict means it changed hands meanwhile: nothing of ours left to give up.
      if (current?.lease.owner === owner) await this.documents.remove(name, current);
    });
  }

  async holder(name: string): Promise<LeaseRecord | undefined> {
    return this.call("read a lease", async () => (await this.documents.read(name))?.lease);
  }

  async close(): Promise<void> {
    this.closed ??= this.documents.close();
    await this.closed;
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      this.ready ??= this.documents.ensureIndex().catch((error: unknown) => {
        this.ready = undefined;
        throw error;
      });
      await this.ready;
      if (this.closed) throw new Error("the lease store is closed");
      return await fn();
    } catch (error) {
      throw new UnavailableError(`could not ${what} in ${this.documents.engine}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

/** The HTTP status of an engine client's response error (both clients put it in meta.statusCode). */
export function responseStatus(error: unknown): number | undefined {
  const meta = (error as { meta?: { statusCode?: number } } | undefined)?.meta;
  return typeof meta?.statusCode === "number" ? meta.statusCode : undefined;
}

/** Settles a conditional write: true when done, false on a version conflict (409). */
export async function conditional(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (responseStatus(error) === 409) return false;
    throw error;
  }
}

/** A get that answers undefined for a missing document (404). */
export async function missingAsUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (responseStatus(error) === 404) return undefined;
    throw error;
  }
}

export const LEASE_MAPPINGS = { dynamic: "strict", properties: { owner: { type: "keyword" }, expiresAt: { type: "long" } } } as const;

/**
 * Waits until a new index answers reads: its creation (or the cluster's health turning yellow) can
 * be acknowledged while the primary shard still recovers, and reads then fail with 503.
 */
export async function untilReadable(read: () => Promise<unknown>, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1_000)) {
    try {
      await missingAsUndefined(read);
      return;
    } catch (error) {
      if (responseStatus(error) !== 503 || Date.now() > until) throw error;
      await sleep(delay);
    }
  }
}

/** An index creation that lost a race to another process is no failure. */
export function alreadyExists(error: unknown): boolean {
  return responseStatus(error) === 400 && /resource_already_exists_exception/.test(JSON.stringify((error as { meta?: { body?: unknown } }).meta?.body ?? ""));
}
