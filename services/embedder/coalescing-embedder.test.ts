import { describe, expect, it } from "vitest";
import { CancelledError, InvalidInputError } from "../../lib/errors.ts";
import { CoalescingEmbedder } from "./coalescing-embedder.ts";
import type { Embedder, EmbeddingKind } from "./embedder.ts";
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
  it("starts a call on an idle model at once and joins the calls that arrive meanwhile, longest texts first", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner);
    const docs = [["a first doc"], ["second doc", "still second"], ["third"], ["fourth doc here"]];
    const results = await Promise.all(docs.map((texts) => embedder.embed(texts, "document")));
    expect(inner.calls.map((c) => c.texts)).toEqual([["a first doc"], ["fourth doc here", "still second", "second doc", "third"]]);
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
    // The second's wait ended when its texts were taken (after the first call's pass), once,
    // though they went in two bands (one text per band, the longer first).
    expect(inner.calls.map((c) => c.texts)).toEqual([["one"], ["three"], ["two"]]);
    expect(waits.map((w) => w.callsSoFar)).toEqual([0, 1]);
    expect(waits.every((w) => w.model === inner.info().model && w.seconds >= 0)).toBe(true);
  });

  it("keeps a window within windowTexts and a model call within maxTexts, serving a larger call in slices", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner, 3);
    const docs = [["x"], ["a", "b"], ["c", "d"], ["e", "f", "g", "h"]];
    const results = await Promise.all(docs.map((texts) => embedder.embed(texts, "document")));
    // Slices are cut to fit; the call cut short waits behind the one that had no turn yet.
    expect(inner.calls.map((c) => c.texts)).toEqual([["x"], ["a", "b", "c"], ["e", "f", "g"], ["d", "h"]]);
    const direct = new HashingEmbedder();
    for (const [i, texts] of docs.entries()) expect(results[i]).toEqual(await direct.embed(texts, "document"));
  });

  it("sorts by length across every waiting document, so each model call holds texts of one length, and gives each its own vectors in order", async () => {
    const inner = new RecordingEmbedder();
    // Bands of 2 texts; a window holds every text waiting.
    const embedder = new CoalescingEmbedder(inner, 256, 2, 8192, undefined, 64);
    const busy = embedder.embed(["busy"], "document");
    const word = (n: number, c: string) => c.repeat(n);
    const docs = [
      [word(3, "a"), word(9, "a"), word(5, "a")],
      [word(8, "b"), word(2, "b")],
      [word(4, "c"), word(7, "c"), word(1, "c"), word(6, "c")],
    ];
    const results = await Promise.all([busy, ...docs.map((texts) => embedder.embed(texts, "document"))]);
    const lengths = inner.calls.slice(1).map((c) => c.texts.map((t) => t.length));
    // Within one call's texts a sort could only pair a document's own; across the window, neighbours in length share a pass.
    expect(lengths).toEqual([[9, 8], [7, 6], [5, 4], [3, 2], [1]]);
    const direct = new HashingEmbedder();
    for (const [i, texts] of docs.entries()) expect(results[i + 1]).toEqual(await direct.embed(texts, "document"));
  });

  it("answers a document only once all of its texts are back, wherever the sort put them", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner, 256, 2, 8192, undefined, 64);
    const busy = embedder.embed(["busy"], "document");
    const answeredAfter = new Map<string, number>();
    const track = (name: string, texts: string[]) => embedder.embed(texts, "document").then(() => answeredAfter.set(name, inner.calls.length));
    // "short" sorts into the last band, "long" into the first; "split" has a text in each.
    await Promise.all([busy, track("short", ["s", "t"]), track("long", ["long text one", "long text two"]), track("split", ["also a long text", "u"])]);
    expect(inner.calls.slice(1).map((c) => c.texts)).toEqual([["also a long text", "long text one"], ["long text two", "s"], ["t", "u"]]);
    // Two bands are in flight at once: "long" is answered when the second band returns; the
    // third band went out when the first returned, so four calls had been made by then.
    expect(answeredAfter.get("long")).toBe(4);
    expect(answeredAfter.get("split")).toBe(4);
    expect(answeredAfter.get("short")).toBe(4);
    expect(inner.calls).toHaveLength(4);
  });

  it("keeps the next band in flight while one runs, so the model never waits for the caller between bands", async () => {
    const inner = new RecordingEmbedder();
    let inFlight = 0;
    let most = 0;
    const tracked: Embedder = Object.assign(Object.create(inner) as Embedder, {
      embed: async (texts: string[], kind: EmbeddingKind) => {
        most = Math.max(most, ++inFlight);
        try {
          return await inner.embed(texts, kind);
        } finally {
          inFlight--;
        }
      },
    });
    const embedder = new CoalescingEmbedder(tracked, 256, 2, 8192, undefined, 64);
    await Promise.all([["a", "b", "c", "d", "e", "f"], ["g", "h"]].map((texts) => embedder.embed(texts, "document")));
    expect(most).toBe(2);
  });

  it("lets a small call that arrives behind a large one go ahead of the window's next band", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner, 256, 4, 8192, undefined, 64);
    const large = Array.from({ length: 20 }, (_, i) => `large ${String(i).padStart(2, "0")}`);
    const largeDone = embedder.embed(large, "document");
    const smallDone = embedder.embed(["small"], "document");
    const [largeVectors] = await Promise.all([largeDone, smallDone]);
    // Two bands of the large one were in flight when "small" came; it waited for those two only.
    expect(inner.calls.map((c) => c.texts)).toEqual([large.slice(0, 4), large.slice(4, 8), ["small"], large.slice(8, 12), large.slice(12, 16), large.slice(16)]);
    expect(largeVectors).toEqual(await new HashingEmbedder().embed(large, "document"));
  });

  it("cuts a band of long texts by characters, so a pass of long chunks is as short as one of short ones", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner, 256, 32, 100);
    const long = Array.from({ length: 5 }, (_, i) => `${i}`.repeat(40));
    await embedder.embed(long, "document");
    expect(inner.calls.map((c) => c.texts.length)).toEqual([2, 2, 1]);
  });

  it("sorts by the model's word pieces when it counts them, a band being one padded pass of 2048", async () => {
    const inner = new RecordingEmbedder();
    // Word pieces unrelated to characters: the sort and the bands must follow the model's count.
    const pieces: Record<string, number> = { busy: 3, short: 1000, "a much longer text": 700, mid: 900, x: 500 };
    const counted: Embedder = Object.assign(Object.create(inner) as Embedder, { embed: (texts: string[], kind: EmbeddingKind) => inner.embed(texts, kind), tokenCount: (t: string) => pieces[t] });
    const embedder = new CoalescingEmbedder(counted, 256, 32, 8192, undefined, 64);
    await Promise.all([embedder.embed(["busy"], "document"), embedder.embed(["x", "short"], "document"), embedder.embed(["a much longer text", "mid"], "document")]);
    // 2 × 1000 ≤ 2048 < 3 × 1000; then 700 × 2 = 1400 ≤ 2048 (the pass pads to its longest).
    expect(inner.calls.map((c) => c.texts)).toEqual([["busy"], ["short", "mid"], ["a much longer text", "x"]]);
  });

  it("never joins a query with documents, and lets a query go ahead of a window's next band", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner, 256, 1, 8192, undefined, 64);
    await Promise.all([embedder.embed(["busy"], "document"), embedder.embed(["d1", "d2", "d3"], "document"), embedder.embed(["q"], "query"), embedder.embed(["d4"], "document")]);
    // The window takes a slice of each document per round (d1, d4, d2, d3); the query goes out
    // beside its first band, not after the window.
    expect(inner.calls.map((c) => [c.kind, c.texts])).toEqual([
      ["document", ["busy"]],
      ["document", ["d1"]],
      ["query", ["q"]],
      ["document", ["d4"]],
      ["document", ["d2"]],
      ["document", ["d3"]],
    ]);
  });

  it("drops a waiting call whose caller went away before its texts were taken; the one the model holds is answered", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner);
    const caller = new AbortController();
    const running = embedder.embed(["taken at once"], "query", caller.signal);
    const waiting = Promise.allSettled(Array.from({ length: 30 }, (_, i) => embedder.embed([`question ${i}`], "query", caller.signal)));
    const other = embedder.embed(["another caller's question"], "query");
    caller.abort();
    expect(await running).toHaveLength(1);
    for (const call of await waiting) expect(call.status === "rejected" && call.reason).toBeInstanceOf(CancelledError);
    expect(await other).toHaveLength(1);
    // Two passes: the one running at the abort, then the other caller's question alone.
    expect(inner.calls.map((c) => c.texts)).toEqual([["taken at once"], ["another caller's question"]]);
    await expect(embedder.embed(["late"], "query", caller.signal)).rejects.toBeInstanceOf(CancelledError);
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
