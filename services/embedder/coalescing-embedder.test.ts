import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../lib/errors.ts";
import { CoalescingEmbedder } from "./coalescing-embedder.ts";
import type { EmbeddingKind } from "./embedder.ts";
import { HashingEmbedder } from "./hashing-embedder.ts";

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

  it("keeps joined calls within maxTexts, but lets a larger call go alone", async () => {
    const inner = new RecordingEmbedder();
    const embedder = new CoalescingEmbedder(inner, 3);
    await Promise.all([["x"], ["a", "b"], ["c", "d"], ["e", "f", "g", "h"]].map((texts) => embedder.embed(texts, "document")));
    expect(inner.calls.map((c) => c.texts.length)).toEqual([1, 2, 2, 4]);
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
