// Two-level chunking through the public API of a real embedded Quarry: a knowledge base made with
// a parent mode keeps it (with the default parent size filled in), PreviewChunks shows the
// children grouped under their parents, and settings that cannot work are refused with the reason.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { ParentMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { COMPANY_MARKDOWN } from "../fixtures/fixture-texts.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { failure } from "./e2e-helpers.ts";

describe("parent–child chunking over the API", () => {
  let quarry: EmbeddedQuarryFixture;
  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
  }, 120_000);
  afterAll(async () => quarry?.stop());

  it("a base made with parent: section keeps it, and PreviewChunks groups its chunks under their sections", async () => {
    const created = await quarry.client.createKnowledgeBase({ name: "sections", chunking: { chunkSize: 48, chunkOverlap: 8, parent: ParentMode.SECTION } });
    expect(created.knowledgeBase!.chunking).toMatchObject({ chunkSize: 48, chunkOverlap: 8, parent: ParentMode.SECTION, parentMaxTokens: 1024 });
    const stored = (await quarry.client.getKnowledgeBase({ knowledgeBase: "sections" })).knowledgeBase!;
    expect(stored.chunking).toMatchObject({ parent: ParentMode.SECTION, parentMaxTokens: 1024 });

    const preview = await quarry.client.previewChunks({ fileName: "company.md", content: new TextEncoder().encode(COMPANY_MARKDOWN), knowledgeBase: "sections" });
    expect(preview.settings).toMatchObject({ parent: ParentMode.SECTION });
    expect(preview.parents.map((p) => p.parent!.sectionPath.at(-1))).toEqual(["Tallis Instruments", "1890s–1930s", "1940s–1970s"]);
    expect(preview.parents.flatMap((p) => p.chunkIndexes)).toEqual(preview.chunks.map((c) => c.index));
    for (const parent of preview.parents) {
      expect(parent.chunkIndexes.length).toBeGreaterThan(1);
      for (const i of parent.chunkIndexes) {
        const chunk = preview.chunks[i];
        expect(chunk.parent).toMatchObject({ index: parent.parent!.index, startOffset: parent.parent!.startOffset, endOffset: parent.parent!.endOffset });
        expect(chunk.startOffset).toBeGreaterThanOrEqual(parent.parent!.startOffset);
        expect(chunk.endOffset).toBeLessThanOrEqual(parent.parent!.endOffset);
        expect(parent.text).toContain(chunk.text);
      }
    }
  });

  it("parent: document makes the whole short document one parent; without a parent mode there are none", async () => {
    const content = new TextEncoder().encode(COMPANY_MARKDOWN);
    const whole = await quarry.client.previewChunks({ fileName: "company.md", content, settings: { chunkSize: 48, chunkOverlap: 8, parent: ParentMode.DOCUMENT } });
    expect(whole.parents).toHaveLength(1);
    expect(whole.parents[0].text.trim()).toBe(COMPANY_MARKDOWN.trim());
    expect(whole.parents[0].chunkIndexes).toHaveLength(whole.chunks.length);
    const plain = await quarry.client.previewChunks({ fileName: "company.md", content, settings: { chunkSize: 48, chunkOverlap: 8 } });
    expect(plain.parents).toEqual([]);
    expect(plain.chunks.every((c) => c.parent === undefined)).toBe(true);
  });

  it("refuses a parent smaller than a chunk, saying so", async () => {
    const error = await failure(() =>
      quarry.client.createKnowledgeBase({ name: "tiny-parents", chunking: { chunkSize: 128, parent: ParentMode.SECTION, parentMaxTokens: 64 } }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/parent size 64 is below the chunk size 128/);
  });
});
