// What the engines on a search engine server (OpenSearch, Elasticsearch) must show beyond the
// SearchEngine contract, because their writes become visible only at a refresh: a record stored by a
// write that never reached its refresh (the process died in between) is still found and replaced by
// the next process's write of the same document; and the keyword field's size that a question's term
// weights are normalised by is read from the store.
import { expect, it } from "vitest";
import type { EmbeddedChunk } from "../../../lib/domain.ts";
import type { DocumentStoreEngine } from "../document-store/document-store-engine.ts";
import type { DocumentStorePort } from "../document-store/document-store-port.ts";
import { documentMarkerId, documentMarkerSource, toChunkSource } from "../document-store/search-documents.ts";

export interface DocumentStoreEngineFixture {
  /** A new engine on the same indices, as a restarted process would open them. */
  openEngine(): DocumentStoreEngine;
  /** The raw store on the same server, for writes the engine did not make. */
  store: DocumentStorePort;
  cleanup(): Promise<void>;
}

function chunk(knowledgeBaseId: string, documentId: string, id: string, text: string): EmbeddedChunk {
  return { id, documentId, knowledgeBaseId, index: 0, text, tokenCount: 4, page: 0, pageEnd: 0, sectionPath: [], start: 0, end: text.length, vector: new Float32Array([1, 0, 0, 0]) };
}

export function describeDocumentStoreEngineWrites(name: string, factory: () => Promise<DocumentStoreEngineFixture>): void {
  it(`${name}: a chunk stored before a crash but never refreshed is replaced by the next process's write of its document`, async () => {
    const fixture = await factory();
    const first = fixture.openEngine();
    let second: DocumentStoreEngine | undefined;
    try {
      const kb = "kb_crashed_write";
      await first.ensureKnowledgeBase(kb, 4);
      const alias = first.aliasFor(kb);
      // What a write that died between its _bulk and its refresh leaves: records no search shows yet.
      const stale = chunk(kb, "doc_crashed", "crashed-0", "Written by the process that died.");
      await fixture.store.bulk(
        "seed",
        [
          { index: { _index: alias, _id: documentMarkerId("doc_crashed") } },
          documentMarkerSource(kb, "doc_crashed", true, "crashed.md"),
          { index: { _index: alias, _id: stale.id } },
          { ...toChunkSource(stale, kb, "doc_crashed", "crashed.md", true), search_terms: "written", embedding: [1, 0, 0, 0] },
        ],
        { refresh: false, requireAlias: true },
      );
      await first.close();

      second = fixture.openEngine();
      const fresh = chunk(kb, "doc_crashed", "crashed-1", "Written again after the restart.");
      await second.replaceDocumentChunks(kb, "doc_crashed", "crashed.md", [fresh]);
      expect((await second.documentChunks(kb, "doc_crashed")).map((c) => c.id)).toEqual([fresh.id]);
    } finally {
      await first.close();
      await second?.close();
      await fixture.cleanup();
    }
  });

  it(`${name}: the keyword field's size (what a question's term weights are normalised by) counts the chunks and their terms`, async () => {
    const fixture = await factory();
    const engine = fixture.openEngine();
    try {
      const kb = "kb_keyword_size";
      await engine.ensureKnowledgeBase(kb, 4);
      const alias = engine.aliasFor(kb);
      expect(await fixture.store.fieldSize(alias, "search_terms")).toEqual({ records: 0, terms: 0 });
      await engine.replaceDocumentChunks(kb, "doc_size", "size.md", [
        chunk(kb, "doc_size", "size-0", "One two three."),
        { ...chunk(kb, "doc_size", "size-1", "Four, five!"), index: 1 },
      ]);
      // The document's marker record has no keyword field and is not counted.
      expect(await fixture.store.fieldSize(alias, "search_terms")).toEqual({ records: 2, terms: 5 });
    } finally {
      await engine.close();
      await fixture.cleanup();
    }
  });
}
