// Singleton work across replicas: a process takes a named lease before work only one process may do
// (a knowledge base's change of embedding model, a sweep), renews it while it works, and stops when
// it is lost. The vocabulary is the bus's: owned() says whether the work is still this process's,
// and LeaseLostError is what work that finds it lost throws.
//
// A holder considers its lease lost at the deadline of its last successful renewal, measured from
// before that renewal was sent, so it stops no later than the moment another process may take the
// lease over; a renewal the store refuses (another owner now) loses it at once. A renewal that
// fails (the engine unreachable) is tried again at the next tick until that deadline.
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { sleep } from "../backoff.ts";
import { LeaseLostError } from "../bus/event-bus.ts";
import type { Logger } from "../logger.ts";
import type { LeaseRecord, LeaseStore } from "./lease-store.ts";

export const DEFAULT_LEASE_MS = 15_000;

export interface LeasesOptions {
  /** A lease's time limit: how long after its owner's last renewal another process may take it over. */
  ttlMs?: number;
  logger: Logger;
  /** This process's name in the records (default: host, pid and a random part). */
  owner?: string;
}

export interface HeldLease {
  readonly name: string;
  /** False once the lease is lost or released: the work must stop before its next step. */
  owned(): boolean;
  /** Aborted (reason: LeaseLostError) when the lease is lost; not when it is released. */
  readonly signal: AbortSignal;
  /** Throws LeaseLostError unless owned(). */
  assertOwned(): void;
  /** Stops renewing and gives the lease up. */
  release(): Promise<void>;
}

export class Leases {
  readonly owner: string;
  readonly ttlMs: number;
  private readonly held = new Set<Held>();

  constructor(
    private readonly store: LeaseStore,
    private readonly options: LeasesOptions,
  ) {
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_MS;
  }

  /** The lease when it is free (or expired), else undefined; store failures propagate. */
  async tryAcquire(name: string): Promise<HeldLease | undefined> {
    const sent = Date.now();
    if (!(await this.store.acquire(name, this.owner, this.ttlMs))) return undefined;
    const lease = new Held(name, this.store, this.owner, this.ttlMs, sent + this.ttlMs, this.options.logger, () => this.held.delete(lease));
    this.held.add(lease);
    return lease;
  }

  /**
   * Waits until the lease is free and takes it, asking again every pollMs (default: a quarter of
   * the time limit); rejects with the signal's reason when it aborts first.
   */
  async acquire(name: string, options: { signal?: AbortSignal; pollMs?: number } = {}): Promise<HeldLease> {
    for (;;) {
      options.signal?.throwIfAborted();
      const held = await this.tryAcquire(name);
      if (held) return held;
      await sleep(options.pollMs ?? Math.max(50, Math.floor(this.ttlMs / 4)), options.signal);
    }
  }

  /** Who holds the lease now (an expired record is nobody's). */
  async holder(name: string): Promise<LeaseRecord | undefined> {
    const record = await this.store.holder(name);
    return record && record.expiresAt >= Date.now() ? record : undefined;
  }

  /** Releases every lease this process holds, then closes the store. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.held].map((lease) => lease.release()));
    await this.store.close();
  }
}

class Held implements HeldLease {
  private readonly controller = new AbortController();
  private done = false;
  private renewTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly name: string,
    private readonly store: LeaseStore,
    private readonly owner: string,
    private readonly ttlMs: number,
    private deadline: number,
    private readonly logger: Logger,
    private readonly forget: () => void,
  ) {
    this.armExpiry();
    this.scheduleRenewal();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  owned(): boolean {
    return !this.done && Date.now() < this.deadline;
  }

  assertOwned(): void {
    if (!this.owned()) throw new LeaseLostError(`lease ${this.name} is no longer this process's`);
  }

  async release(): Promise<void> {
    if (this.done) return;
    this.stop();
    await this.store.release(this.name, this.owner);
  }

  private scheduleRenewal(): void {
    this.renewTimer = setTimeout(() => void this.renew(), Math.max(20, Math.floor(this.ttlMs / 3)));
    this.renewTimer.unref();
  }

  private async renew(): Promise<void> {
    if (this.done) return;
    const sent = Date.now();
    try {
      const kept = await this.store.renew(this.name, this.owner, this.ttlMs);
      if (this.done) return;
      if (!kept) return this.lose("another process holds it now");
      if (sent + this.ttlMs > this.deadline && Date.now() < this.deadline) {
        this.deadline = sent + this.ttlMs;
        this.armExpiry();
      }
    } catch (error) {
      this.logger.warn({ err: error, lease: this.name }, "could not renew a lease; trying again until its time limit");
    }
    if (!this.done) this.scheduleRenewal();
  }

  private armExpiry(): void {
    clearTimeout(this.expiryTimer);
    this.expiryTimer = setTimeout(() => this.lose(`not renewed within its time limit (${this.ttlMs} ms)`), Math.max(0, this.deadline - Date.now()));
    this.expiryTimer.unref();
  }

  private lose(why: string): void {
    if (this.done) return;
    this.logger.warn({ lease: this.name }, `lease lost: ${why}`);
    this.stop();
    this.controller.abort(new LeaseLostError(`lease ${this.name} was lost: ${why}`));
  }

  private stop(): void {
    this.done = true;
    clearTimeout(this.renewTimer);
    clearTimeout(this.expiryTimer);
    this.forget();
  }
}
