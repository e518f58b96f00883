// One large document must not hold up everyone else: a tiny file uploaded (to another knowledge
// base) while a large one is vectorizing is ready long before the large one, in a time comparable
// to ingesting it alone. Measured side by side on one instance, so a slow machine slows both.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { largeTextDocument, uploadAndTrack } from "../../bench/document-timing.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";

describe("fair ingestion (embedded, SQLite bus)", () => {
  let quarry: EmbeddedQuarryFixture;

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    // Small chunks make a few thousand of them quick to embed while still taking many forward passes.
    await quarry.client.createKnowledgeBase({ name: "large", chunking: { chunkSize: 48, chunkOverlap: 0 } });
    await quarry.client.createKnowledgeBase({ name: "small" });
  });
  afterAll(async () => {
    await quarry?.stop();
  });

  it("makes a tiny document ready while a large one is still vectorizing", async () => {
    // Alone first (which also warms the model): the yardstick for "within seconds" on this machine.
    const alone = await uploadAndTrack(quarry.client, "small", "alone.txt", "a seventeen-byte.").ready;

    const large = uploadAndTrack(quarry.client, "large", "large.txt", largeTextDocument(3_000));
    await large.vectorizing;
    const tiny = await uploadAndTrack(quarry.client, "small", "tiny.txt", "a seventeen-byte!").ready;
    const largeDone = await large.ready;
    const report = `tiny alone ${alone.ms} ms; tiny behind large ${tiny.ms} ms; large ${largeDone.ms} ms (${largeDone.chunks} chunks)`;
    console.log(report);
    expect(largeDone.chunks, report).toBeGreaterThan(2_000);
    expect(tiny.readyAt, `the tiny document was ready only after the large one: ${report}`).toBeLessThan(largeDone.readyAt);
    // Behind the large document it may wait for a forward pass or two, not for the large one's ingest.
    expect(tiny.ms, report).toBeLessThan(Math.max(10 * alone.ms, largeDone.ms / 5));
  }, 600_000);
});
