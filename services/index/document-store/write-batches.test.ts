import { describe, expect, it } from "vitest";
import { WriteBatches } from "./write-batches.ts";

/** A batch runner that records each batch and finishes it only when told to. */
function gatedRunner(outcome: (write: string) => Error | undefined = () => undefined) {
  const batches: { key: string; writes: string[]; finish(): void; fail(error: Error): void }[] = [];
  const run = (key: string, writes: string[]) =>
    new Promise<(Error | undefined)[]>((resolve, reject) => {
      batches.push({ key, writes, finish: () => resolve(writes.map(outcome)), fail: reject });
    });
  return { batches, run };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("WriteBatches", () => {
  it("starts a write that finds its key idle at once, and joins the writes that arrive meanwhile into the next batch", async () => {
    const { batches, run } = gatedRunner();
    const writer = new WriteBatches(run, { maxWrites: 10, maxWeight: 100 });
    const first = writer.write("kb", "a", { id: "a", weight: 1 });
    await tick();
    expect(batches.map((b) => b.writes)).toEqual([["a"]]);
    const later = [writer.write("kb", "b", { id: "b", weight: 1 }), writer.write("kb", "c", { id: "c", weight: 1 })];
    const otherKey = writer.write("other", "x", { id: "x", weight: 1 });
    await tick();
    expect(batches.map((b) => b.writes)).toEqual([["a"], ["x"]]);
    batches[0].finish();
    await first;
    await tick();
    expect(batches.map((b) => b.writes)).toEqual([["a"], ["x"], ["b", "c"]]);
    batches[1].finish();
    batches[2].finish();
    await Promise.all([...later, otherKey]);
  });

  it("answers each write with its own outcome, and a batch that throws fails every write in it", async () => {
    const { batches, run } = gatedRunner((write) => (write === "bad" ? new Error("bad write") : undefined));
    const writer = new WriteBatches(run, { maxWrites: 10, maxWeight: 100 });
    const blocker = writer.write("kb", "first", { id: "first", weight: 1 });
    const [good, bad] = [writer.write("kb", "good", { id: "good", weight: 1 }), writer.write("kb", "bad", { id: "bad", weight: 1 })];
    await tick();
    batches[0].finish();
    await blocker;
    await tick();
    batches[1].finish();
    await expect(good).resolves.toBeUndefined();
    await expect(bad).rejects.toThrow("bad write");

    const lost = writer.write("kb", "lost", { id: "lost", weight: 1 });
    await tick();
    batches[2].fail(new Error("engine down"));
    await expect(lost).rejects.toThrow("engine down");
  });

  it("never puts two writes of one id in a batch, and keeps batches within their count and weight", async () => {
    const { batches, run } = gatedRunner();
    const writer = new WriteBatches(run, { maxWrites: 3, maxWeight: 10 });
    const writes = [writer.write("kb", "busy", { id: "busy", weight: 1 })];
    await tick();
    for (const [write, id, weight] of [
      ["d1", "d", 1],
      ["e", "e", 1],
      ["d2", "d", 1],
      ["f", "f", 1],
      ["g", "g", 9],
      ["h", "h", 50],
      ["i", "i", 1],
    ] as const) {
      writes.push(writer.write("kb", write, { id, weight }));
    }
    for (let i = 0; i < 6; i++) {
      await tick();
      batches[i].finish();
    }
    await Promise.all(writes);
    // A heavier write than the limit still goes, alone.
    expect(batches.map((b) => b.writes)).toEqual([["busy"], ["d1", "e"], ["d2", "f"], ["g"], ["h"], ["i"]]);
  });
});
