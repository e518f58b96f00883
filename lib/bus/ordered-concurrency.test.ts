import { describe, expect, it, vi } from "vitest";
import { OrderedWindow, type OrderedWindowOptions } from "./ordered-concurrency.ts";

type Item = { id: number; key: string; ms: number };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Feeds the items through a window as a subscription does (adding while there is room), then drains it. */
async function feed<T, R>(items: T[], options: OrderedWindowOptions<T, R>): Promise<boolean> {
  const window = new OrderedWindow(options);
  for (const item of items) {
    while (window.room === 0) {
      if (!(await window.settleReady())) return false;
      if (window.room === 0) await window.changed();
    }
    window.add(item);
  }
  return settleAll(window);
}

/** Settles everything as it finishes, as a running subscription does (drain() is for closing). */
async function settleAll<T, R>(window: OrderedWindow<T, R>): Promise<boolean> {
  while (window.size > 0) {
    if (!(await window.settleReady())) return false;
    if (window.size > 0) await window.changed();
  }
  return true;
}

function recorder(items: Item[], concurrency: number, settleUntil = Infinity, capacity = 64) {
  const started: number[] = [];
  const settled: number[] = [];
  let running = 0;
  let maxRunning = 0;
  const busyKeys = new Set<string>();
  let keyClash = false;
  const run = feed(items, {
    concurrency,
    capacity,
    keyOf: (i) => i.key,
    run: async (i) => {
      if (busyKeys.has(i.key)) keyClash = true;
      busyKeys.add(i.key);
      started.push(i.id);
      maxRunning = Math.max(maxRunning, ++running);
      await sleep(i.ms);
      running--;
      busyKeys.delete(i.key);
      return i.id * 10;
    },
    settle: (i, result) => {
      expect(result).toBe(i.id * 10);
      if (i.id >= settleUntil) return false;
      settled.push(i.id);
      return true;
    },
  });
  return { run, started, settled, stats: () => ({ maxRunning, keyClash }) };
}

describe("OrderedWindow", () => {
  it("handles up to the limit at once and settles in log order even when later ones finish first", async () => {
    const items: Item[] = [30, 5, 20, 1, 10, 2].map((ms, id) => ({ id, key: `k${id}`, ms }));
    const r = recorder(items, 3);
    expect(await r.run).toBe(true);
    expect(r.settled).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r.stats().maxRunning).toBe(3);
  });

  it("never has two messages of one key running, and keeps their order", async () => {
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

  it("a message waiting for its key does not hold up other keys behind it", async () => {
    const items: Item[] = [
      { id: 0, key: "a", ms: 60 },
      { id: 1, key: "a", ms: 1 },
      { id: 2, key: "b", ms: 1 },
    ];
    const r = recorder(items, 2);
    await sleep(20);
    expect(r.started).toEqual([0, 2]);
    expect(await r.run).toBe(true);
    expect(r.settled).toEqual([0, 1, 2]);
  });

  it("runs the messages behind a long one to the end while the long one holds the commit position", async () => {
    // The long message waits on a gate the test opens, not on a timer, so a loaded machine cannot
    // reorder what the test means: six short messages finish while the first still runs.
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const items: Item[] = [{ id: 0, key: "huge", ms: 0 }, ...[1, 2, 3, 4, 5, 6].map((id) => ({ id, key: `k${id}`, ms: 2 }))];
    const finished: number[] = [];
    const settled: number[] = [];
    const window = new OrderedWindow<Item, number>({
      concurrency: 2,
      capacity: 16,
      keyOf: (i) => i.key,
      run: async (i) => {
        await (i.id === 0 ? gate : sleep(i.ms));
        finished.push(i.id);
        return i.id;
      },
      settle: (i) => (settled.push(i.id), true),
    });
    for (const item of items) window.add(item);
    await vi.waitFor(() => expect(finished).toHaveLength(6), { timeout: 5_000 });
    expect(finished).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await window.settleReady()).toBe(true);
    expect(settled).toEqual([]);
    openGate();
    expect(await window.drain()).toBe(true);
    expect(settled).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it("with concurrency 1 handles one at a time", async () => {
    const items: Item[] = [3, 1, 2].map((ms, id) => ({ id, key: `k${id}`, ms }));
    const r = recorder(items, 1);
    expect(await r.run).toBe(true);
    expect(r.stats().maxRunning).toBe(1);
    expect(r.started).toEqual([0, 1, 2]);
  });

  it("settles nothing after a message that could not be settled, and says so", async () => {
    const items: Item[] = [5, 1, 1, 1, 1].map((ms, id) => ({ id, key: `k${id}`, ms }));
    const r = recorder(items, 2, 2);
    expect(await r.run).toBe(false);
    expect(r.settled).toEqual([0, 1]);
  });

  it("takes no more than its capacity", async () => {
    const window = new OrderedWindow<number, number>({ concurrency: 1, capacity: 2, keyOf: String, run: async (i) => i, settle: () => true });
    window.add(1);
    window.add(2);
    expect(window.room).toBe(0);
    expect(await settleAll(window)).toBe(true);
    expect(window.room).toBe(2);
  });

  it("stops draining when the grace ends and releases what is left, unsettled", async () => {
    const settled: number[] = [];
    const window = new OrderedWindow<Item, number>({
      concurrency: 2,
      capacity: 8,
      keyOf: (i) => i.key,
      run: async (i) => (await sleep(i.ms), i.id),
      settle: (i) => (settled.push(i.id), true),
    });
    window.add({ id: 0, key: "a", ms: 5 });
    window.add({ id: 1, key: "b", ms: 5_000 });
    window.add({ id: 2, key: "c", ms: 5 });
    window.add({ id: 3, key: "d", ms: 5 });
    await sleep(1); // 0 and 1 have started
    const started = performance.now();
    expect(await window.drain(sleep(50))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(settled).toEqual([0]);
    // 1 still runs and 3 never started (2 slots): both stay uncommitted.
    expect(window.close()).toBe(3);
    expect(await window.settleReady()).toBe(true);
    expect(settled).toEqual([0]);
  });

  it("rethrows a handler's throw, settling only those before it", async () => {
    const settled: number[] = [];
    const run = feed([0, 1, 2], {
      concurrency: 3,
      capacity: 8,
      keyOf: (i) => String(i),
      run: async (i) => {
        await sleep(i === 1 ? 1 : 10);
        if (i === 1) throw new Error("bug");
        return i;
      },
      settle: (i) => (settled.push(i), true),
    });
    await expect(run).rejects.toThrow("bug");
    expect(settled).toEqual([0]);
  });

  it("says when settleReady() has work (the head finished), so an idle poll can skip it", async () => {
    let finish!: () => void;
    const settled: number[] = [];
    const window = new OrderedWindow<number, number>({
      concurrency: 1,
      capacity: 4,
      keyOf: () => "k",
      run: (n) => new Promise((resolve) => (finish = () => resolve(n))),
      settle: (n) => {
        settled.push(n);
        return true;
      },
    });
    expect(window.settleable).toBe(false);
    window.add(1);
    await sleep(0);
    expect(window.settleable, "the head is still running").toBe(false);
    finish();
    await window.changed();
    expect(window.settleable).toBe(true);
    expect(await window.settleReady()).toBe(true);
    expect(settled).toEqual([1]);
    expect(window.settleable).toBe(false);
    window.add(2);
    await sleep(0);
    finish();
    await window.changed();
    window.close();
    expect(window.settleable, "a closed window settles nothing").toBe(false);
  });
});
