// The contract every lease store meets, run against each one (SQLite, OpenSearch, Elasticsearch):
// `open()` gives a new connection to the same store, as another process would have. Waits are for
// events (a signal's abort, the store's record changing), never fixed sleeps; the time limits are
// long enough that a loaded machine's timer delays do not decide the outcome.
import { afterAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { LeaseLostError } from "../../bus/event-bus.ts";
import { silentLogger } from "../../logger.ts";
import type { LeaseStore } from "../lease-store.ts";
import { Leases, type HeldLease } from "../leases.ts";

export interface LeaseStoreFixture {
  open(): Promise<LeaseStore>;
  cleanup(): Promise<void>;
}

const TTL_MS = 3_000;

export function describeLeaseStoreContract(name: string, fixture: () => Promise<LeaseStoreFixture>): void {
  describe(`lease store contract: ${name}`, () => {
    const opened: LeaseStore[] = [];
    let made: Promise<LeaseStoreFixture> | undefined;
    const store = async () => {
      made ??= fixture();
      const s = await (await made).open();
      opened.push(s);
      return s;
    };
    const holderProcess = async (owner: string) => new Leases(await store(), { ttlMs: TTL_MS, logger: silentLogger, owner });
    const lease = () => `test:${randomUUID()}`;

    afterAll(async () => {
      await Promise.allSettled(opened.map((s) => s.close()));
      await (await made)?.cleanup();
    });

    it("of holders racing for one lease, exactly one gets it, and the other sees who", async () => {
      const contenders = await Promise.all(["a", "b", "c", "d"].map((owner) => holderProcess(owner)));
      for (let round = 0; round < 3; round++) {
        const name = lease();
        const results = await Promise.all(contenders.map((leases) => leases.tryAcquire(name)));
        const winners = results.filter((held): held is HeldLease => held !== undefined);
        expect(winners).toHaveLength(1);
        const winner = contenders[results.indexOf(winners[0])];
        expect((await contenders[0].holder(name))?.owner).toBe(winner.owner);
        await winners[0].release();
      }
    });

    it("a released lease is free at once", async () => {
      const [a, b] = [await holderProcess("a"), await holderProcess("b")];
      const name = lease();
      const held = await a.tryAcquire(name);
      expect(held?.owned()).toBe(true);
      expect(await b.tryAcquire(name)).toBeUndefined();
      await held!.release();
      expect(held!.owned()).toBe(false);
      expect(await a.holder(name)).toBeUndefined();
      expect((await b.tryAcquire(name))?.owned()).toBe(true);
    });

    it("the holder renews its lease, so it outlives its first time limit and nobody takes it", async () => {
      const [a, b] = [await holderProcess("a"), await holderProcess("b")];
      const name = lease();
      const held = (await a.tryAcquire(name))!;
      const first = (await a.holder(name))!.expiresAt;
      const renewed = await waitFor(async () => ((await b.holder(name))?.expiresAt ?? 0) > first, "the lease's deadline moves on");
      expect(renewed).toBe(true);
      await waitFor(async () => Date.now() > first, "the first deadline passes");
      expect(await b.tryAcquire(name)).toBeUndefined();
      expect(held.owned()).toBe(true);
      await held.release();
    });

    it("a dead owner's lease is taken over after its time limit, not before", async () => {
      const raw = await store();
      const b = await holderProcess("b");
      const name = lease();
      // A process that took the lease and died: nobody renews it.
      expect(await raw.acquire(name, "dead-owner", TTL_MS)).toBe(true);
      const deadline = (await raw.holder(name))!.expiresAt;
      expect(await b.tryAcquire(name)).toBeUndefined();
      let taken: HeldLease | undefined;
      await waitFor(async () => (taken = await b.tryAcquire(name)) !== undefined, "the other process takes the lease over");
      expect(Date.now()).toBeGreaterThanOrEqual(deadline);
      expect((await b.holder(name))?.owner).toBe("b");
      await taken!.release();
    });

    it("a holder whose lease went to another stops: owned() is false, the signal aborts with LeaseLostError", async () => {
      const raw = await store();
      const [a, b] = [await holderProcess("a"), await holderProcess("b")];
      const name = lease();
      const held = (await a.tryAcquire(name))!;
      const lost = aborted(held.signal);
      // Another process took it (as after an expiry the holder did not notice): the next renewal is refused.
      await raw.release(name, "a");
      const taker = (await b.tryAcquire(name))!;
      const reason = await lost;
      expect(reason).toBeInstanceOf(LeaseLostError);
      expect(held.owned()).toBe(false);
      expect(() => held.assertOwned()).toThrow(LeaseLostError);
      expect(taker.owned()).toBe(true);
      expect((await b.holder(name))?.owner).toBe("b");
      await taker.release();
    });

    it("a holder that cannot reach the store gives the lease up at its time limit, before anyone can take it", async () => {
      const own = await store();
      const a = new Leases(own, { ttlMs: TTL_MS, logger: silentLogger, owner: "a" });
      const b = await holderProcess("b");
      const name = lease();
      const held = (await a.tryAcquire(name))!;
      const lost = aborted(held.signal);
      await own.close();
      const reason = (await lost) as Error;
      expect(reason).toBeInstanceOf(LeaseLostError);
      expect(reason.message).toMatch(/time limit/);
      // The holder stopped first: the store's deadline is still ahead or just passed, and then b takes it.
      let taken: HeldLease | undefined;
      await waitFor(async () => (taken = await b.tryAcquire(name)) !== undefined, "the other process takes the lease over");
      await taken!.release();
    });
  });
}

function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));
}

/** Polls a condition until it holds; fails after a minute (a generous bound on a loaded machine). */
async function waitFor(condition: () => Promise<boolean>, what: string): Promise<boolean> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting until ${what}`);
}
