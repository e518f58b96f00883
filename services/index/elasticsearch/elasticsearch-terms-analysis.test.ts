// Elasticsearch's English stemming against the real node: which analysis the engine picks (the node's
// own porter_stem where analysis-common is loaded, else Quarry's stems), what an index records, and
// that a base made before stemming keeps answering as it did, alone and searched beside a new one.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EmbeddedChunk, SearchQuery } from "../../../lib/domain.ts";
import { describeWithEngine } from "../../../test/support/engines.ts";
import { ENGINE_STEMS_TERMS, QUARRY_STEMS_TERMS } from "../document-store/document-store-engine.ts";
import { chunkFieldMappings } from "../document-store/search-documents.ts";
import { elasticsearchTestSpace, type ElasticsearchTestSpace } from "../testing/elasticsearch-test-support.ts";
import { ElasticsearchSearchEngine } from "./elasticsearch-search-engine.ts";
import { elasticsearchTermsAnalysis } from "./elasticsearch-terms-analysis.ts";

const DIM = 4;

function chunk(kb: string, documentId: string, index: number, text: string): EmbeddedChunk {
  const vector = new Float32Array(DIM);
  vector[index % DIM] = 1;
  return { id: `${documentId}-${index}`, documentId, knowledgeBaseId: kb, index, text, tokenCount: 8, page: 1, pageEnd: 1, sectionPath: [], start: 0, end: text.length, vector };
}

function bm25(knowledgeBaseIds: string[], text: string): SearchQuery {
  return { knowledgeBaseIds, text, mode: "bm25", topK: 10, minScore: 0, documentIds: [] };
}

describeWithEngine("ELASTICSEARCH_URL", "Elasticsearch English stemming", (url) => {
  let space: ElasticsearchTestSpace;
  let engine: ElasticsearchSearchEngine;
  let nodeStems: boolean;

  beforeAll(async () => {
    space = elasticsearchTestSpace(url);
    engine = new ElasticsearchSearchEngine(space.client, { indexPrefix: `${space.prefix}chunks-` });
    const nodes = await space.client.nodes.info({ metric: "plugins" });
    nodeStems = Object.values(nodes.nodes).every((node) => (node.modules ?? []).some((m) => m.name === "analysis-common"));
  });
  afterAll(async () => {
    await engine?.close();
    await space?.cleanup();
  });

  /** A base laid out as Quarry made them before it recorded an analysis: whitespace terms, no terms_analysis. */
  async function baseFromBeforeStemming(kb: string): Promise<void> {
    const alias = engine.aliasFor(kb);
    await space.client.indices.create({
      index: `${alias}-v1`,
      aliases: { [alias]: {} },
      settings: { refresh_interval: "-1" },
      mappings: {
        dynamic: "strict",
        _meta: { knowledge_base_id: kb, dimension: DIM },
        properties: {
          ...chunkFieldMappings("whitespace"),
          embedding: { type: "dense_vector", dims: DIM, index: true, similarity: "cosine" },
          document_embedding: { type: "dense_vector", dims: DIM, index: true, similarity: "cosine" },
        },
      } as Record<string, unknown>,
    });
  }

  it("stems with the node's analysis-common where it is loaded, and itself where it is not", async () => {
    const analysis = await elasticsearchTermsAnalysis(space.client);
    expect(analysis.name).toBe(nodeStems ? ENGINE_STEMS_TERMS : QUARRY_STEMS_TERMS);
  });

  it("finds another form of a word, and records the analysis in the index's _meta", async () => {
    const kb = `kb_stem_${space.prefix.slice(-13, -1)}`;
    await engine.ensureKnowledgeBase(kb, DIM);
    await engine.replaceDocumentChunks(kb, "doc", "runs.txt", [chunk(kb, "doc", 0, "The athlete runs every morning."), chunk(kb, "doc", 1, "A quiet library.")]);
    const hits = await engine.search(bm25([kb], "running"));
    expect(hits.map((h) => h.chunk.text)).toEqual(["The athlete runs every morning."]);
    expect(hits[0].explain).toMatchObject({ bm25Rank: 1, bm25Score: hits[0].score });
    const mapping = await space.client.indices.getMapping({ index: engine.aliasFor(kb) });
    expect(Object.values(mapping)[0].mappings._meta?.terms_analysis).toBe(nodeStems ? ENGINE_STEMS_TERMS : QUARRY_STEMS_TERMS);
  });

  it("keeps a base made before stemming as it was, also when searched beside a stemmed one", async () => {
    const [old, fresh] = [`kb_old_${space.prefix.slice(-13, -1)}`, `kb_new_${space.prefix.slice(-13, -1)}`];
    await baseFromBeforeStemming(old);
    await engine.ensureKnowledgeBase(old, DIM);
    await engine.ensureKnowledgeBase(fresh, DIM);
    await engine.replaceDocumentChunks(old, "old-doc", "old.txt", [chunk(old, "old-doc", 0, "The old athlete runs at dawn.")]);
    await engine.replaceDocumentChunks(fresh, "new-doc", "new.txt", [chunk(fresh, "new-doc", 0, "The new athlete runs at dusk.")]);
    // The old base matches only the word as written, as before.
    expect((await engine.search(bm25([old], "running"))).map((h) => h.chunk.id)).toEqual([]);
    const [oldAlone] = await engine.search(bm25([old], "runs"));
    const [freshAlone] = await engine.search(bm25([fresh], "runs"));
    expect([oldAlone.chunk.id, freshAlone.chunk.id]).toEqual(["old-doc-0", "new-doc-0"]);
    // Together, each base is asked in its own form and scores as it does alone.
    const together = await engine.search(bm25([old, fresh], "runs"));
    expect(new Map(together.map((h) => [h.chunk.id, h.score]))).toEqual(new Map([[oldAlone.chunk.id, oldAlone.score], [freshAlone.chunk.id, freshAlone.score]]));
    expect((await engine.search(bm25([old, fresh], "running"))).map((h) => h.chunk.id)).toEqual(["new-doc-0"]);
  });

  it("moves a base made before stemming onto it with a change of model (a new index)", async () => {
    const kb = `kb_move_${space.prefix.slice(-13, -1)}`;
    await baseFromBeforeStemming(kb);
    await engine.ensureKnowledgeBase(kb, DIM);
    const text = chunk(kb, "doc", 0, "The athlete runs every morning.");
    await engine.replaceDocumentChunks(kb, "doc", "runs.txt", [text]);
    expect(await engine.search(bm25([kb], "running"))).toEqual([]);
    await engine.beginShadow(kb, DIM);
    await engine.writeShadowChunks(kb, "doc", "runs.txt", [text]);
    await engine.commitShadow(kb);
    expect((await engine.search(bm25([kb], "running"))).map((h) => h.chunk.id)).toEqual(["doc-0"]);
  });
});
