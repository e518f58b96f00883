import { describe, expect, it } from "vitest";
import { handleInOrder } from "./ordered-concurrency.ts";

type Item = { id: number; key: string; ms: number };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recorder(items: Item[], concurrency: number, settleUntil = Infinity) {
  const started: number[] = [];
  const settled: number[] = [];
  let inHand = 0;
  let maxInHand = 0;
  const busyKeys = new Set<string>();
  let keyClash = false;
  const run = handleInOrder(items, {
    concurrency,
    keyOf: (i) => i.key,
    run: async (i) => {
      if (busyKeys.has(i.key)) keyClash = true;
      busyKeys.add(i.key);
      started.push(i.id);
      maxInHand = Math.max(maxInHand, ++inHand);
      await sleep(i.ms);
      inHand--;
      busyKeys.delete(i.key);
      return i.id * 10;
    },
    settle: (i, result) => {
      expect(result).toBe(i.id * 10);
      if (i.id >= settleUntil) return false;
      settled.push(i.id);
      return true;
    },
    stopped: () => false,
  });
  return { run, started, settled, stats: () => ({ maxInHand, keyClash }) };
}

describe("handleInOrder", () => {
  it("handles up to the limit at once and settles in log order even when later ones finish first", async () => {
    const items: Item[] = [30, 5, 20, 1, 10, 2].map((ms, id) => ({ id, key: `k${id}`, ms }));
    const r = recorder(items, 3);
    expect(await r.run).toBe(true);
    expect(r.settled).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r.stats().maxInHand).toBe(3);
  });

  it("never has two messages of one key in hand, and keeps their order", async () => {
    const items: Item[] = [
      { id: 0, key: "a", ms: 20 },
      { id: 1, key: "a", ms: 1 },
      { id: 2, key: "b", ms: 1 },
      { id: 3, key: "a", ms: 1 },
    ];
    const r = recorder(items, 4);
    expect(await r.run).toBe(true);
    expect(r.stats().keyClash).toBe(false);
    expect(r.started.filter((id) => items[id].key === "a")).toEqual([0, 1, 3]);
    expect(r.settled).toEqual([0, 1, 2, 3]);
  });

  it("with concurrency 1 handles one at a time", async () => {
    const items: Item[] = [3, 1, 2].map((ms, id) => ({ id, key: `k${id}`, ms }));
    const r = recorder(items, 1);
    expect(await r.run).toBe(true);
    expect(r.stats().maxInHand).toBe(1);
    expect(r.started).toEqual([0, 1, 2]);
  });

  it("settles nothing after a message that could not be settled, and says so", async () => {
    const items: Item[] = [5, 1, 1, 1, 1].map((ms, id) => ({ id, key: `k${id}`, ms }));
    const r = recorder(items, 2, 2);
    expect(await r.run).toBe(false);
    expect(r.settled).toEqual([0, 1]);
  });

  it("takes no new message once stopped, but finishes and settles those in hand", async () => {
    let stop = false;
    const settled: number[] = [];
    const done = await handleInOrder([0, 1, 2, 3], {
      concurrency: 2,
      keyOf: (i) => String(i),
      run: async (i) => {
        await sleep(5);
        stop = true;
        return i;
      },
      settle: (i) => (settled.push(i), true),
      stopped: () => stop,
    });
    expect(done).toBe(false);
    expect(settled).toEqual([0, 1]);
  });

  it("rethrows a handler's throw after the messages in hand finished, settling only those before it", async () => {
    const settled: number[] = [];
    let finished = 0;
    const run = handleInOrder([0, 1, 2], {
      concurrency: 3,
      keyOf: (i) => String(i),
      run: async (i) => {
        await sleep(i === 1 ? 1 : 10);
        finished++;
        if (i === 1) throw new Error("bug");
        return i;
      },
      settle: (i) => (settled.push(i), true),
      stopped: () => false,
    });
    await expect(run).rejects.toThrow("bug");
    expect(finished).toBe(3);
    expect(settled).toEqual([0]);
  });
});
