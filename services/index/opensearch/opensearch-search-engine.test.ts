// The SearchEngine contract against a real OpenSearch, once per hybrid path: the _msearch path fused
// by rrf-fusion.ts, and the native hybrid query through a neural-search RRF pipeline (searches that
// 2.19's pipeline cannot compute the same way — weights, several knowledge bases — still take the
// _msearch path there; opensearch-native-hybrid.test.ts checks which path ran).
import { expect, it } from "vitest";
import { describeWithEngine } from "../../../test/support/engines.ts";
import { chunkFieldMappings } from "../document-store/search-documents.ts";
import { describeDocumentStoreEngineWrites } from "../testing/document-store-engine.contract.ts";
import { describeSearchEngineContract } from "../testing/search-engine.contract.ts";
import { OpenSearchDocumentStore } from "./opensearch-document-store.ts";
import { OpenSearchSearchEngine, type OpenSearchSearchEngineOptions } from "./opensearch-search-engine.ts";
import { openSearchTestSpace } from "../testing/opensearch-test-support.ts";

describeWithEngine("OPENSEARCH_URL", "OpenSearchSearchEngine", (url) => {
  const variants: [string, (prefix: string) => OpenSearchSearchEngineOptions][] = [
    ["OpenSearch, _msearch hybrid", (prefix) => ({ indexPrefix: `${prefix}chunks-` })],
    ["OpenSearch, native hybrid (RRF pipeline)", (prefix) => ({ indexPrefix: `${prefix}chunks-`, nativeHybrid: { fusion: "rrf", pipelinePrefix: prefix } })],
  ];
  for (const [name, options] of variants) {
    describeSearchEngineContract(name, async () => {
      const space = openSearchTestSpace(url);
      const engine = new OpenSearchSearchEngine(space.client, options(space.prefix));
      await engine.prepare();
      return {
        engine,
        async cleanup() {
          await engine.close();
          await space.cleanup();
        },
      };
    });
  }
});

describeWithEngine("OPENSEARCH_URL", "OpenSearchSearchEngine writes", (url) => {
  describeDocumentStoreEngineWrites("OpenSearch", async () => {
    const space = openSearchTestSpace(url);
    return {
      openEngine: () => new OpenSearchSearchEngine(space.client, { indexPrefix: `${space.prefix}chunks-` }),
      store: new OpenSearchDocumentStore(space.client),
      cleanup: () => space.cleanup(),
    };
  });
});

describeWithEngine("OPENSEARCH_URL", "OpenSearchSearchEngine and chunk indices made before parents", (url) => {
  it("adds the parent field to an older chunk index (strict mapping without it) before writing children", async () => {
    const space = openSearchTestSpace(url);
    const engine = new OpenSearchSearchEngine(space.client, { indexPrefix: `${space.prefix}chunks-` });
    try {
      const kb = "kb_before_parents";
      const { parent: _parent, ...oldFields } = chunkFieldMappings("whitespace");
      await space.client.indices.create({
        index: `${engine.aliasFor(kb)}-v1`,
        body: {
          aliases: { [engine.aliasFor(kb)]: {} },
          mappings: { dynamic: "strict", _meta: { knowledge_base_id: kb, dimension: 4 }, properties: { ...oldFields, embedding: { type: "float" } } },
        } as never,
      });
      await engine.ensureKnowledgeBase(kb, 4);
      const parent = { index: 0, start: 0, end: 40, tokenCount: 9, sectionPath: ["Old"], firstChunkIndex: 0, chunkCount: 1 };
      const chunk = { id: "old-0", documentId: "doc_old", knowledgeBaseId: kb, index: 0, text: "Kept from before parents were stored.", tokenCount: 6, page: 0, pageEnd: 0, sectionPath: ["Old"], start: 0, end: 37, parent };
      await engine.replaceDocumentChunks(kb, "doc_old", "old.md", [{ ...chunk, vector: new Float32Array([1, 0, 0, 0]) }]);
      expect(await engine.getChunks(["old-0"])).toEqual([chunk]);
    } finally {
      await engine.close();
      await space.cleanup();
    }
  });
});
