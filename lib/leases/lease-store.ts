// Where leases live: a record per lease naming its owner and the deadline its owner set. Taking one
// succeeds when it is free, past its deadline, or already the caller's, and only one of two racing
// callers wins it (a conditional write in the engine, a row update in SQLite). Deadlines are the
// holders' wall clocks, so the processes sharing a store need clocks in step to well under a lease's
// time limit (NTP gives milliseconds).

export interface LeaseRecord {
  owner: string;
  /** Epoch milliseconds after which anyone may take the lease. */
  expiresAt: number;
}

export interface LeaseStore {
  /** Takes the lease for ttlMs when it is free, expired or already owner's; true when owner holds it now. */
  acquire(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Extends owner's lease by ttlMs from now; false when it is no longer owner's (taken after it expired, or released). */
  renew(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Gives owner's lease up at once (another may take it without waiting for its deadline); a no-op when not owner's. */
  release(name: string, owner: string): Promise<void>;
  /** The lease's record (expired or not), or undefined when nobody took it or it was released. */
  holder(name: string): Promise<LeaseRecord | undefined>;
  close(): Promise<void>;
}
