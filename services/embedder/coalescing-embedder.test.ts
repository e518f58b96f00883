import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../lib/errors.ts";
import { CoalescingEmbedder } from "./coalescing-embedder.ts";
import type { EmbeddingKind } from "./embedder.ts";
import { HashingEmbedder } from "../../lib/testing/hashing-embedder.ts";

/** A real (hashing) embedder that records each call it gets and takes a while to answer. */
class RecordingEmbedder extends HashingEmbedder {
  readonly calls: { texts: string[]; kind: EmbeddingKind }[] = [];
  override async embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    this.calls.push({ texts, kind });
    await new Promise((r) => setTimeout(r, 20));
    if (texts.includes("poison")) throw new InvalidInputError("the model refused a text");
    return super.embed(texts, kind);
  }
}

describe("CoalescingEmbedder", () => {
  it("starts a call on an idle model at once and joins the calls that arrive meanwhile into one", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner);
    const docs = [["a first doc"], ["second doc", "still second"], ["third"], ["fourth doc here"]];
    const results = await Promise.all(docs.map((texts) => embedder.embed(texts, "document")));
    expect(inner.calls.map((c) => c.texts)).toEqual([["a first doc"], ["second doc", "still second", "third", "fourth doc here"]]);
    const direct = new HashingEmbedder();
    for (const [i, texts] of docs.entries()) expect(results[i]).toEqual(await direct.embed(texts, "document"));
  });

  it("tells how long each call waited: once, when the model takes its first texts, never before", async () => {
    const inner = new RecordingEmbedder();
    const waits: { model: string; seconds: number; callsSoFar: number }[] = [];
    const embedder = new CoalescingEmbedder(inner, 256, 1, 8192, (model, seconds) => waits.push({ model, seconds, callsSoFar: inner.calls.length }));
    const first = embedder.embed(["one"], "document");
    const second = embedder.embed(["two", "three"], "document");
    // The first found the model idle; the second is still queued behind its pass.
    expect(waits.map((w) => w.callsSoFar)).toEqual([0]);
    await Promise.all([first, second]);
    // The second's wait ended when its first slice went out (after the first call's pass), once,
    // though it took two passes (one text per slice).
    expect(inner.calls.map((c) => c.texts)).toEqual([["one"], ["two"], ["three"]]);
    expect(waits.map((w) => w.callsSoFar)).toEqual([0, 1]);
    expect(waits.every((w) => w.model === inner.info().model && w.seconds >= 0)).toBe(true);
  });

  it("keeps joined calls within maxTexts, serving a larger call in slices", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner, 3);
    const docs = [["x"], ["a", "b"], ["c", "d"], ["e", "f", "g", "h"]];
    const results = await Promise.all(docs.map((texts) => embedder.embed(texts, "document")));
    // Slices are cut to fit; once a call has had a turn, a newcomer's turn is one slice on its own.
    expect(inner.calls.map((c) => c.texts)).toEqual([["x"], ["a", "b", "c"], ["e", "f", "g"], ["d", "h"]]);
    const direct = new HashingEmbedder();
    for (const [i, texts] of docs.entries()) expect(results[i]).toEqual(await direct.embed(texts, "document"));
  });

  it("gives a small call that arrives behind a large one a place in the next model call", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner, 256, 4);
    const large = Array.from({ length: 12 }, (_, i) => `large ${i}`);
    const largeDone = embedder.embed(large, "document");
    const smallDone = embedder.embed(["small"], "document");
    let smallAt = -1;
    void smallDone.then(() => (smallAt = inner.calls.length));
    const [largeVectors] = await Promise.all([largeDone, smallDone]);
    // First call: a slice of the large one (the model was idle); the second is the small one alone.
    expect(inner.calls.map((c) => c.texts)).toEqual([large.slice(0, 4), ["small"], large.slice(4, 8), large.slice(8)]);
    expect(smallAt).toBe(2);
    expect(largeVectors).toEqual(await new HashingEmbedder().embed(large, "document"));
  });

  it("alternates between large calls, a slice of each per model call", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner, 4, 2);
    const a = ["a1", "a2", "a3", "a4", "a5", "a6"];
    const b = ["b1", "b2", "b3", "b4"];
    const c = ["c1", "c2"];
    await Promise.all([a, b, c].map((texts) => embedder.embed(texts, "document")));
    // While a newcomer waits a model call is one slice, so each newcomer's first answer comes after one pass.
    expect(inner.calls.map((call) => call.texts)).toEqual([
      ["a1", "a2"],
      ["b1", "b2"],
      ["c1", "c2"],
      ["a3", "a4", "b3", "b4"],
      ["a5", "a6"],
    ]);
  });

  it("cuts a slice of long texts by characters, so a pass of long chunks is as short as one of short ones", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner, 256, 32, 100);
    const long = Array.from({ length: 5 }, (_, i) => `${i}`.repeat(40));
    await embedder.embed(long, "document");
    expect(inner.calls.map((c) => c.texts.length)).toEqual([2, 2, 1]);
  });

  it("never joins a query with documents", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner);
    await Promise.all([embedder.embed(["busy"], "document"), embedder.embed(["d1"], "document"), embedder.embed(["q"], "query"), embedder.embed(["d2"], "document")]);
    expect(inner.calls.map((c) => [c.kind, c.texts])).toEqual([
      ["document", ["busy"]],
      ["document", ["d1", "d2"]],
      ["query", ["q"]],
    ]);
  });

  it("fails only the call whose text the model refused, not those batched with it", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner);
    const [first, good, bad, alsoGood] = await Promise.allSettled([
      embedder.embed(["busy"], "document"),
      embedder.embed(["fine text"], "document"),
      embedder.embed(["poison"], "document"),
      embedder.embed(["also fine"], "document"),
    ]);
    expect(first.status).toBe("fulfilled");
    expect(good.status).toBe("fulfilled");
    expect(alsoGood.status).toBe("fulfilled");
    expect(bad.status).toBe("rejected");
    expect((bad as PromiseRejectedResult).reason).toBeInstanceOf(InvalidInputError);
  });
});
