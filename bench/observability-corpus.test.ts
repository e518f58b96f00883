import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { RetrievalMode } from "../gen/quarry/common/v1/common_pb.ts";
import { describeWithShared } from "../test/support/shared-material.ts";
import { startEmbeddedQuarry } from "../test/support/embedded-quarry.ts";
import { buildSearchCorpus, copyCorpus } from "./observability-corpus.ts";

describeWithShared("eval", "the observability bench's search corpus", (evalDir) => {
  it("is a store a fresh Quarry starts on from a copy of it and searches", async () => {
    const corpus = await buildSearchCorpus({ chunks: 300, queries: 5, evalDir, seed: 7 });
    const dataDir = await mkdtemp(join(tmpdir(), "quarry-obs-corpus-test-"));
    try {
      await copyCorpus(corpus, dataDir);
      const quarry = await startEmbeddedQuarry({ dataDir });
      try {
        const res = await quarry.client.search({ query: corpus.queries[0], knowledgeBases: [corpus.knowledgeBaseId], settings: { mode: RetrievalMode.HYBRID, topK: 5 } });
        expect(res.hits).toHaveLength(5);
        expect(res.hits.every((h) => h.chunk!.documentId.startsWith("doc_synthetic_"))).toBe(true);
      } finally {
        await quarry.stop({ keepData: true });
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await corpus.remove();
    }
  }, 120_000);
});
