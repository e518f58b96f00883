// The behaviour every SearchEngine must show, written only against the interface: the SQLite,
// OpenSearch and Elasticsearch engines run this same suite. Each test seeds its own randomly named
// knowledge base, so suites can run in parallel against one shared backend. Vectors are 4-dimensional and hand-made,
// so the expected neighbours are plain to see and the expected scores are computed, not recorded.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Chunk, EmbeddedChunk, RetrievalMode, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError, UnavailableError } from "../../../lib/errors.ts";
import type { SearchEngine } from "../search/search-engine.ts";
import { commonWordTexts, RARE_WORD_QUESTION, RARE_WORD_TEXTS } from "./keyword-statistics-texts.ts";

export interface SearchEngineFixture {
  engine: SearchEngine;
  cleanup(): Promise<void>;
}

const DIM = 4;

function uniqueId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
}

function cosine(a: number[], b: number[]): number {
  const dot = a.reduce((sum, x, i) => sum + x * b[i], 0);
  const norm = (v: number[]) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
  return dot / (norm(a) * norm(b));
}

function makeChunk(knowledgeBaseId: string, documentId: string, index: number, text: string, vector: number[], id = `${documentId}-${index}`): EmbeddedChunk {
  return {
    id,
    documentId,
    knowledgeBaseId,
    index,
    text,
    tokenCount: text.length,
    page: index + 1,
    pageEnd: index + 2,
    sectionPath: ["Contract", `Section ${index}`],
    start: index * 100,
    end: index * 100 + text.length,
    vector: new Float32Array(vector),
  };
}

function withoutVector(chunk: EmbeddedChunk): Chunk {
  const { vector: _vector, ...rest } = chunk;
  return rest;
}

function ids(hits: SearchHit[]): string[] {
  return hits.map((hit) => hit.chunk.id);
}

interface Seeded {
  kb: string;
  docA: string;
  docB: string;
  docC: string;
  chunks: Record<"a0" | "a1" | "b0" | "b1" | "c0", EmbeddedChunk>;
  vectors: Record<"a0" | "a1" | "b0" | "b1" | "c0", number[]>;
}

export function describeSearchEngineContract(name: string, factory: () => Promise<SearchEngineFixture>): void {
  describe(`SearchEngine contract: ${name}`, () => {
    let fixture: SearchEngineFixture;
    let engine: SearchEngine;

    beforeAll(async () => {
      fixture = await factory();
      engine = fixture.engine;
    });
    afterAll(async () => {
      await fixture?.cleanup();
    });

    async function seed(): Promise<Seeded> {
      const kb = uniqueId("kb_contract");
      const docA = uniqueId("doc_a");
      const docB = uniqueId("doc_b");
      const docC = uniqueId("doc_c");
      const vectors = {
        a0: [1, 0, 0, 0],
        a1: [0, 1, 0, 0],
        b0: [0, 0, 1, 0],
        b1: [0, 0, 0, 1],
        c0: [0.6, 0.8, 0, 0],
      };
      const chunks = {
        a0: makeChunk(kb, docA, 0, "The quick brown fox jumps over the lazy dog near the river bank.", vectors.a0),
        a1: makeChunk(kb, docA, 1, "Photosynthesis converts sunlight into chemical energy inside green plants.", vectors.a1),
        b0: makeChunk(kb, docB, 0, "Income tax returns are due in April for most residents.", vectors.b0),
        b1: makeChunk(kb, docB, 1, "最高人民检察院依法对刑事诉讼实行法律监督。", vectors.b1),
        c0: makeChunk(kb, docC, 0, "人民法院审理民事案件，保护当事人的合法权益。", vectors.c0),
      };
      await engine.ensureKnowledgeBase(kb, DIM);
      await engine.replaceDocumentChunks(kb, docA, "animals-and-plants.txt", [chunks.a0, chunks.a1]);
      await engine.replaceDocumentChunks(kb, docB, "tax-and-law.md", [chunks.b0, chunks.b1]);
      await engine.replaceDocumentChunks(kb, docC, "court.pdf", [chunks.c0]);
      return { kb, docA, docB, docC, chunks, vectors };
    }

    function query(kb: string | string[], mode: RetrievalMode, overrides: Partial<SearchQuery> = {}): SearchQuery {
      return { knowledgeBaseIds: Array.isArray(kb) ? kb : [kb], text: "", mode, topK: 10, minScore: 0, documentIds: [], ...overrides };
    }

    describe("storage", () => {
      it("returns chunks by id in the order asked, leaving unknown ids out", async () => {
        const { chunks } = await seed();
        const got = await engine.getChunks([chunks.c0.id, "no-such-chunk", chunks.b1.id, chunks.a0.id]);
        expect(got).toEqual([withoutVector(chunks.c0), withoutVector(chunks.b1), withoutVector(chunks.a0)]);
        expect(await engine.getChunks([])).toEqual([]);
      });

      it("returns chunks by document and index in the order asked, leaving empty places out", async () => {
        const { kb, docA, docB, chunks } = await seed();
        const got = await engine.getChunksAt([
          { knowledgeBaseId: kb, documentId: docB, index: 1 },
          { knowledgeBaseId: kb, documentId: docA, index: 7 },
          { knowledgeBaseId: kb, documentId: docA, index: 0 },
          { knowledgeBaseId: kb, documentId: "no-such-document", index: 0 },
          { knowledgeBaseId: "kb_elsewhere", documentId: docA, index: 1 },
          { knowledgeBaseId: kb, documentId: docB, index: 1 },
        ]);
        expect(got).toEqual([withoutVector(chunks.b1), withoutVector(chunks.a0)]);
        expect(await engine.getChunksAt([])).toEqual([]);
      });

      it("finds the chunks whose text contains a text, exactly or normalised, disabled ones included", async () => {
        const { kb, docA, docB, chunks } = await seed();
        const find = (text: string, overrides: Partial<Parameters<SearchEngine["findChunks"]>[0]> = {}) =>
          engine.findChunks({ knowledgeBaseIds: [kb], text, limit: 20, documentIds: [], maxScan: 1_000, ...overrides });
        const exact = await find("chemical energy");
        expect(exact).toMatchObject({ matched: 1, scanned: 5, complete: true });
        expect(exact.chunks).toEqual([{ chunk: withoutVector(chunks.a1), fileName: "animals-and-plants.txt", enabled: true, exact: true }]);
        // Other case, full-width letters, a line break inside a word group: only the normalised texts match.
        const normalised = await find("ＣＨＥＭＩＣＡＬ\n  energy INSIDE");
        expect(normalised.chunks.map((c) => [c.chunk.id, c.exact])).toEqual([[chunks.a1.id, false]]);
        // Chinese across a line break; the disabled document's chunk is still found, marked so.
        await engine.setDocumentEnabled(kb, docB, false);
        const chinese = await find("对刑事\n诉讼实行");
        expect(chinese.chunks.map((c) => [c.chunk.id, c.enabled])).toEqual([[chunks.b1.id, false]]);
        expect((await find("not in any chunk")).chunks).toEqual([]);
        // "the" is in two chunks of document A: the limit caps the list, not the count; a document filter narrows.
        const limited = await find("the", { limit: 1 });
        expect(limited.matched).toBe(2);
        expect(limited.chunks).toHaveLength(1);
        expect((await find("the", { documentIds: [docB] })).matched).toBe(0);
        expect((await find("the", { documentIds: [docA] })).matched).toBe(2);
        const capped = await find("人民", { maxScan: 2 });
        expect(capped).toMatchObject({ scanned: 2, complete: false });
        await expect(find("   ")).rejects.toBeInstanceOf(InvalidInputError);
        await expect(engine.findChunks({ knowledgeBaseIds: [uniqueId("kb_missing")], text: "x", limit: 1, documentIds: [], maxScan: 10 })).rejects.toBeInstanceOf(NotFoundError);
      });

      it("is idempotent in ensureKnowledgeBase but refuses a different dimension", async () => {
        const { kb, chunks } = await seed();
        await engine.ensureKnowledgeBase(kb, DIM);
        expect(await engine.getChunks([chunks.a0.id])).toHaveLength(1);
        await expect(engine.ensureKnowledgeBase(kb, DIM + 1)).rejects.toBeInstanceOf(FailedPreconditionError);
      });

      it("replaces a document's chunks: old ones gone, no duplicates when the same ids come again", async () => {
        const { kb, docA, chunks } = await seed();
        const replacement = [
          makeChunk(kb, docA, 0, "Quantum computers manipulate qubits with microwave pulses.", [1, 0, 0, 0], chunks.a0.id),
          makeChunk(kb, docA, 1, "Superconducting circuits need cryogenic temperatures.", [0.9, 0.1, 0, 0], uniqueId("chunk")),
        ];
        await engine.replaceDocumentChunks(kb, docA, "physics.txt", replacement);
        await engine.replaceDocumentChunks(kb, docA, "physics.txt", replacement);

        expect(await engine.getChunks([chunks.a0.id, chunks.a1.id, replacement[1].id])).toEqual(replacement.map(withoutVector));
        expect(await engine.search(query(kb, "bm25", { text: "photosynthesis" }))).toEqual([]);
        const qubits = await engine.search(query(kb, "bm25", { text: "qubits" }));
        expect(ids(qubits)).toEqual([chunks.a0.id]);
        expect(qubits[0].fileName).toBe("physics.txt");

        const all = await engine.search(query(kb, "vector", { vector: new Float32Array([1, 0, 0, 0]), topK: 50 }));
        expect(new Set(ids(all)).size).toBe(all.length);
        expect(all).toHaveLength(5);
        expect(all.filter((hit) => hit.chunk.documentId === docA)).toHaveLength(2);
      });

      it("replaces documents written at the same time each with its own new chunks, and one document written twice at once with the later set", async () => {
        const { kb, docA, docB, chunks } = await seed();
        const docD = uniqueId("doc_d");
        const newA = [makeChunk(kb, docA, 0, "Glaciers carve valleys over thousands of years.", [1, 0, 0, 0], uniqueId("chunk"))];
        const sameB = [chunks.b0, chunks.b1];
        const firstD = [makeChunk(kb, docD, 0, "Volcanoes vent molten rock.", [0, 1, 0, 0], uniqueId("chunk")), makeChunk(kb, docD, 1, "Ash clouds ground aircraft.", [0, 0, 1, 0], uniqueId("chunk"))];
        const laterD = [makeChunk(kb, docD, 0, "Tides follow the moon.", [0, 0, 0, 1], uniqueId("chunk"))];
        await Promise.all([
          engine.replaceDocumentChunks(kb, docA, "a.txt", newA),
          engine.replaceDocumentChunks(kb, docB, "b.txt", sameB),
          engine.replaceDocumentChunks(kb, docD, "d.txt", firstD),
          engine.replaceDocumentChunks(kb, docD, "d.txt", laterD),
        ]);

        const all = await engine.search(query(kb, "vector", { vector: new Float32Array([1, 1, 1, 1]), topK: 50 }));
        const byDocument = (documentId: string) => all.filter((hit) => hit.chunk.documentId === documentId).map((hit) => hit.chunk.id).sort();
        expect(byDocument(docA)).toEqual([newA[0].id]);
        expect(byDocument(docB)).toEqual([chunks.b0.id, chunks.b1.id].sort());
        expect(byDocument(docD)).toEqual([laterD[0].id]);
        expect(all).toHaveLength(5); // the three above and docC's one chunk
        expect(await engine.getChunks([chunks.a0.id, chunks.a1.id, ...firstD.map((c) => c.id)])).toEqual([]);
      });

      it("writes nothing when a vector has the wrong dimension", async () => {
        const { kb, docA, chunks } = await seed();
        const bad = [
          makeChunk(kb, docA, 0, "Zebras graze on the savanna.", [1, 0, 0, 0], uniqueId("chunk")),
          makeChunk(kb, docA, 1, "Giraffes browse acacia leaves.", [1, 0, 0], uniqueId("chunk")),
        ];
        await expect(engine.replaceDocumentChunks(kb, docA, "animals.txt", bad)).rejects.toBeInstanceOf(FailedPreconditionError);
        expect(await engine.getChunks([bad[0].id, bad[1].id])).toEqual([]);
        expect(await engine.getChunks([chunks.a0.id, chunks.a1.id])).toEqual([withoutVector(chunks.a0), withoutVector(chunks.a1)]);
        expect(await engine.search(query(kb, "bm25", { text: "zebras giraffes" }))).toEqual([]);
        expect(ids(await engine.search(query(kb, "bm25", { text: "photosynthesis" })))).toEqual([chunks.a1.id]);
      });

      it("deletes a document's chunks from storage and from every retrieval mode", async () => {
        const { kb, docA, chunks } = await seed();
        await engine.deleteDocument(kb, docA);
        expect(await engine.getChunks([chunks.a0.id, chunks.a1.id])).toEqual([]);
        expect(await engine.search(query(kb, "bm25", { text: "photosynthesis fox" }))).toEqual([]);
        const vector = await engine.search(query(kb, "vector", { vector: new Float32Array([1, 0, 0, 0]) }));
        expect(ids(vector).sort()).toEqual([chunks.b0.id, chunks.b1.id, chunks.c0.id].sort());
      });

      it("drops a knowledge base: its chunks are gone and searching it is NotFound", async () => {
        const { kb, chunks } = await seed();
        await engine.dropKnowledgeBase(kb);
        expect(await engine.getChunks([chunks.a0.id, chunks.c0.id])).toEqual([]);
        await expect(engine.search(query(kb, "bm25", { text: "fox" }))).rejects.toBeInstanceOf(NotFoundError);
      });

      it("keeps a child's parent (span, section, the run of its siblings) in every way a chunk comes back", async () => {
        const { kb, docA, chunks } = await seed();
        const parent = { index: 0, start: 0, end: 260, tokenCount: 57, sectionPath: ["Contract", "Nature"], firstChunkIndex: 0, chunkCount: 3 };
        const children = [
          { ...makeChunk(kb, docA, 0, "Otters crack shellfish open with stones.", [1, 0, 0, 0], chunks.a0.id), parent },
          { ...makeChunk(kb, docA, 1, "Beavers fell trees to build their dams.", [0, 1, 0, 0], chunks.a1.id), parent },
          { ...makeChunk(kb, docA, 2, "Herons stand still for minutes before they strike.", [0.5, 0.5, 0, 0]), parent },
        ];
        await engine.replaceDocumentChunks(kb, docA, "nature.md", children);
        const expected = children.map(withoutVector);
        expect(await engine.getChunks(children.map((c) => c.id))).toEqual(expected);
        expect(await engine.getChunksAt([0, 1, 2].map((index) => ({ knowledgeBaseId: kb, documentId: docA, index })))).toEqual(expected);
        expect(await engine.documentChunks(kb, docA)).toEqual(expected);
        const [bm25] = await engine.search(query(kb, "bm25", { text: "beavers dams" }));
        expect(bm25.chunk).toEqual(expected[1]);
        const [vector] = await engine.search(query(kb, "vector", { vector: new Float32Array([1, 0, 0, 0]), topK: 1 }));
        expect(vector.chunk).toEqual(expected[0]);
        const [hybrid] = await engine.search(query(kb, "hybrid", { text: "herons strike", vector: new Float32Array([0.5, 0.5, 0, 0]), topK: 1 }));
        expect(hybrid.chunk).toEqual(expected[2]);
        // A chunk without a parent comes back without one.
        expect((await engine.getChunks([chunks.b0.id]))[0]).not.toHaveProperty("parent");
      });
    });

    describe("bm25", () => {
      it("ranks the chunk with the English query words first", async () => {
        const { kb, chunks } = await seed();
        const hits = await engine.search(query(kb, "bm25", { text: "How does photosynthesis turn sunlight into energy?" }));
        expect(hits[0].chunk).toEqual(withoutVector(chunks.a1));
        expect(hits[0].fileName).toBe("animals-and-plants.txt");
        expect(hits[0].score).toBeGreaterThan(0);
        for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hits[i].score);
      });

      it.each(["检察", "诉讼"])("matches the two-character Chinese word %s inside a longer sentence", async (word) => {
        const { kb, chunks } = await seed();
        const hits = await engine.search(query(kb, "bm25", { text: word }));
        expect(ids(hits)).toEqual([chunks.b1.id]);
      });

      it("ranks a Chinese question's best chunk first", async () => {
        const { kb, chunks } = await seed();
        const hits = await engine.search(query(kb, "bm25", { text: "法院如何审理民事案件？" }));
        expect(hits[0].chunk.id).toBe(chunks.c0.id);
      });

      it("fills the explanation with the BM25 rank and score", async () => {
        const { kb } = await seed();
        const hits = await engine.search(query(kb, "bm25", { text: "人民 energy tax" }));
        expect(hits.length).toBeGreaterThan(1);
        hits.forEach((hit, i) => {
          expect(hit.explain).toMatchObject({ bm25Rank: i + 1, bm25Score: hit.score, vectorRank: 0, vectorScore: 0 });
        });
      });

      it("matches inflected English forms through Porter stemming, and reads back the text as written", async () => {
        // Its own knowledge base, so the seeded chunks' rankings elsewhere stay as they are.
        const kb = uniqueId("kb_contract");
        const doc = uniqueId("doc_stem");
        const cited = makeChunk(kb, doc, 0, "Every answer carries a citation of its source passage.", [1, 0, 0, 0]);
        const river = makeChunk(kb, doc, 1, "The river floods its banks every spring.", [0, 1, 0, 0]);
        const runner = makeChunk(kb, doc, 2, "She runs the marathon in spring.", [0, 0, 1, 0]);
        await engine.ensureKnowledgeBase(kb, DIM);
        await engine.replaceDocumentChunks(kb, doc, "stemming.txt", [cited, river, runner]);
        expect(ids(await engine.search(query(kb, "bm25", { text: "citations" })))).toEqual([cited.id]);
        expect(ids(await engine.search(query(kb, "bm25", { text: "Flooding" })))).toEqual([river.id]);
        expect(ids(await engine.search(query(kb, "bm25", { text: "citation" })))).toEqual([cited.id]);
        // The hit is the chunk as written (what highlights and citations read), explained by its BM25 rank.
        const [hit] = await engine.search(query(kb, "hybrid", { text: "running", vector: new Float32Array([0, 0, 0, 1]), topK: 1 }));
        expect(hit.chunk.text).toBe("She runs the marathon in spring.");
        expect(hit.chunk.id).toBe(runner.id);
        expect(hit.explain.bm25Rank).toBe(1);
        expect(hit.explain.bm25Score).toBeGreaterThan(0);
      });

      it("finds a chunk by the headings above it, not only by its own text", async () => {
        const kb = uniqueId("kb_contract");
        const doc = uniqueId("doc_heading");
        const titled = { ...makeChunk(kb, doc, 0, "The trial enrolled 412 adults over two years.", [1, 0, 0, 0]), sectionPath: ["Vitamin D and bone density"] };
        const other = { ...makeChunk(kb, doc, 1, "Participants were asked about their diet.", [0, 1, 0, 0]), sectionPath: ["Methods"] };
        await engine.ensureKnowledgeBase(kb, DIM);
        await engine.replaceDocumentChunks(kb, doc, "paper.md", [titled, other]);
        const hits = await engine.search(query(kb, "bm25", { text: "vitamin bone" }));
        expect(ids(hits)).toEqual([titled.id]);
        // The stored text is still exactly the chunk's own span.
        expect(hits[0].chunk.text).toBe("The trial enrolled 412 adults over two years.");
      });

      it("weighs a word the question repeats more, with diminishing returns (Okapi's query term frequency)", async () => {
        // Four chunks of equal length, each question word in exactly one of them, so every word
        // scores alike and only the question's repetitions decide the order.
        const kb = uniqueId("kb_contract");
        const doc = uniqueId("doc_qtf");
        const [apple, pear, plumFig] = [
          makeChunk(kb, doc, 0, "apple alpha beta gamma", [1, 0, 0, 0]),
          makeChunk(kb, doc, 1, "pear alpha beta gamma", [0, 1, 0, 0]),
          makeChunk(kb, doc, 2, "plum fig beta gamma", [0, 0, 1, 0]),
        ];
        const filler = makeChunk(kb, doc, 3, "delta epsilon zeta eta", [0, 0, 0, 1]);
        await engine.ensureKnowledgeBase(kb, DIM);
        await engine.replaceDocumentChunks(kb, doc, "fruit.txt", [apple, pear, plumFig, filler]);
        // Said twice, a word outranks one said once, whichever it is.
        expect(ids(await engine.search(query(kb, "bm25", { text: "apple pear apple" })))).toEqual([apple.id, pear.id]);
        expect(ids(await engine.search(query(kb, "bm25", { text: "pear apple pear" })))).toEqual([pear.id, apple.id]);
        // Said three times, it still weighs less than two different words said once each.
        expect(ids(await engine.search(query(kb, "bm25", { text: "apple apple apple plum fig" })))).toEqual([plumFig.id, apple.id]);
      });

      it("never turns user text into query syntax", async () => {
        const { kb, chunks } = await seed();
        for (const text of ['"unbalanced quote', "fox AND (OR NOT* ^text: NEAR(", "tax* OR -river", "{col}: 'x'"]) {
          await expect(engine.search(query(kb, "bm25", { text }))).resolves.toBeInstanceOf(Array);
        }
        expect(ids(await engine.search(query(kb, "bm25", { text: '"photosynthesis' })))).toEqual([chunks.a1.id]);
        expect(await engine.search(query(kb, "bm25", { text: "?!… ，。" }))).toEqual([]);
      });
    });

    describe("vector", () => {
      it("returns the nearest chunks by cosine similarity", async () => {
        const { kb, chunks, vectors } = await seed();
        const q = [0.9, 0.3, 0, 0];
        const hits = await engine.search(query(kb, "vector", { vector: new Float32Array(q), topK: 3 }));
        expect(ids(hits)).toEqual([chunks.a0.id, chunks.c0.id, chunks.a1.id]);
        expect(hits[0].score).toBeCloseTo(cosine(q, vectors.a0), 4);
        expect(hits[1].score).toBeCloseTo(cosine(q, vectors.c0), 4);
        expect(hits[2].score).toBeCloseTo(cosine(q, vectors.a1), 4);
        hits.forEach((hit, i) => expect(hit.explain).toMatchObject({ vectorRank: i + 1, vectorScore: hit.score, bm25Rank: 0, bm25Score: 0 }));
      });

      it("rejects a missing query vector and one of the wrong dimension", async () => {
        const { kb } = await seed();
        await expect(engine.search(query(kb, "vector", {}))).rejects.toBeInstanceOf(InvalidInputError);
        await expect(engine.search(query(kb, "hybrid", { text: "fox" }))).rejects.toBeInstanceOf(InvalidInputError);
        await expect(engine.search(query(kb, "vector", { vector: new Float32Array([1, 0, 0]) }))).rejects.toBeInstanceOf(FailedPreconditionError);
      });
    });

    describe("hybrid", () => {
      it("fuses both lists by reciprocal rank, with ranks that match the separate lists", async () => {
        const { kb, chunks } = await seed();
        const text = "green plants energy river";
        const vector = new Float32Array([1, 0.2, 0.1, 0.05]);
        const candidates = 20;
        const bm25 = await engine.search(query(kb, "bm25", { text, topK: candidates }));
        const knn = await engine.search(query(kb, "vector", { vector, topK: candidates }));
        const hybrid = await engine.search(query(kb, "hybrid", { text, vector, topK: 10, candidates }));

        expect(ids(hybrid).sort()).toEqual([...new Set([...ids(bm25), ...ids(knn)])].sort());
        for (const hit of hybrid) {
          const bm25Rank = ids(bm25).indexOf(hit.chunk.id) + 1;
          const vectorRank = ids(knn).indexOf(hit.chunk.id) + 1;
          expect(hit.explain.bm25Rank).toBe(bm25Rank);
          expect(hit.explain.vectorRank).toBe(vectorRank);
          expect(hit.explain.bm25Score).toBeCloseTo(bm25Rank ? bm25[bm25Rank - 1].score : 0, 4);
          expect(hit.explain.vectorScore).toBeCloseTo(vectorRank ? knn[vectorRank - 1].score : 0, 4);
          const expected = (bm25Rank ? 1 / (60 + bm25Rank) : 0) + (vectorRank ? 1 / (60 + vectorRank) : 0);
          expect(hit.explain.fusedScore).toBeCloseTo(expected, 10);
          expect(hit.score).toBeCloseTo(hit.explain.fusedScore, 10);
        }
        for (let i = 1; i < hybrid.length; i++) expect(hybrid[i - 1].score).toBeGreaterThanOrEqual(hybrid[i].score);
        // The fox chunk is second for the words and first for the vector: only fusion puts it on top.
        expect(hybrid[0].chunk.id).toBe(chunks.a0.id);
        expect(hybrid[0].explain.bm25Rank).toBeGreaterThan(0);
        expect(hybrid[0].explain.vectorRank).toBe(1);
      });

      it("honours the RRF constant and the list weights", async () => {
        const { kb, chunks } = await seed();
        const text = "green plants energy river";
        const vector = new Float32Array([1, 0.2, 0.1, 0.05]);
        const wordsOnly = await engine.search(query(kb, "hybrid", { text, vector, weights: { bm25: 1, vector: 0 }, rrfK: 10 }));
        expect(wordsOnly[0].chunk.id).toBe(chunks.a1.id);
        expect(wordsOnly[0].explain.fusedScore).toBeCloseTo(1 / (10 + wordsOnly[0].explain.bm25Rank), 10);
        const vectorOnly = await engine.search(query(kb, "hybrid", { text, vector, weights: { bm25: 0, vector: 2 }, rrfK: 10 }));
        expect(vectorOnly[0].chunk.id).toBe(chunks.a0.id);
        expect(vectorOnly[0].explain.fusedScore).toBeCloseTo(2 / (10 + 1), 10);
      });
    });

    describe("filters and limits", () => {
      it("searches only the documents asked for, in every mode", async () => {
        const { kb, docB, chunks } = await seed();
        const onlyB = { documentIds: [docB] };
        const bm25 = await engine.search(query(kb, "bm25", { text: "tax fox photosynthesis 检察", ...onlyB }));
        expect(ids(bm25).sort()).toEqual([chunks.b0.id, chunks.b1.id].sort());
        // B's chunks are the farthest from this vector: a filter applied after a top-2 cut would find none.
        const vector = await engine.search(query(kb, "vector", { vector: new Float32Array([1, 0.1, 0, 0]), topK: 2, ...onlyB }));
        expect(ids(vector).sort()).toEqual([chunks.b0.id, chunks.b1.id].sort());
        const hybrid = await engine.search(query(kb, "hybrid", { text: "fox tax", vector: new Float32Array([1, 0, 0, 0]), ...onlyB }));
        expect(hybrid.length).toBeGreaterThan(0);
        expect(hybrid.every((hit) => hit.chunk.documentId === docB)).toBe(true);
      });

      it("never returns a disabled document's chunks, and returns them again once enabled", async () => {
        const { kb, docA, chunks } = await seed();
        await engine.setDocumentEnabled(kb, docA, false);
        expect(await engine.search(query(kb, "bm25", { text: "photosynthesis fox" }))).toEqual([]);
        const vector = await engine.search(query(kb, "vector", { vector: new Float32Array([1, 0, 0, 0]), topK: 2 }));
        expect(vector).toHaveLength(2);
        expect(vector.every((hit) => hit.chunk.documentId !== docA)).toBe(true);
        const hybrid = await engine.search(query(kb, "hybrid", { text: "fox", vector: new Float32Array([1, 0, 0, 0]) }));
        expect(hybrid.every((hit) => hit.chunk.documentId !== docA)).toBe(true);
        // Still stored.
        expect(await engine.getChunks([chunks.a0.id])).toEqual([withoutVector(chunks.a0)]);

        await engine.setDocumentEnabled(kb, docA, true);
        expect(ids(await engine.search(query(kb, "bm25", { text: "photosynthesis" })))).toEqual([chunks.a1.id]);
        expect(ids(await engine.search(query(kb, "vector", { vector: new Float32Array([1, 0, 0, 0]), topK: 1 })))).toEqual([chunks.a0.id]);
      });

      it("keeps a disabled document disabled when its chunks are replaced", async () => {
        const { kb, docA, chunks } = await seed();
        await engine.setDocumentEnabled(kb, docA, false);
        await engine.replaceDocumentChunks(kb, docA, "animals-and-plants.txt", [chunks.a0, chunks.a1]);
        expect(await engine.search(query(kb, "bm25", { text: "photosynthesis fox" }))).toEqual([]);
      });

      it("returns at most topK hits", async () => {
        const { kb } = await seed();
        expect(await engine.search(query(kb, "bm25", { text: "人民", topK: 1 }))).toHaveLength(1);
        expect(await engine.search(query(kb, "vector", { vector: new Float32Array([1, 1, 1, 1]), topK: 2 }))).toHaveLength(2);
        expect(await engine.search(query(kb, "hybrid", { text: "人民 fox tax", vector: new Float32Array([1, 1, 1, 1]), topK: 3 }))).toHaveLength(3);
      });

      it("drops hits below minScore in the mode's own score", async () => {
        const { kb, chunks } = await seed();
        const vector = new Float32Array([0.9, 0.3, 0, 0]);
        const all = await engine.search(query(kb, "vector", { vector }));
        const close = await engine.search(query(kb, "vector", { vector, minScore: 0.5 }));
        expect(all.length).toBeGreaterThan(close.length);
        expect(ids(close)).toEqual([chunks.a0.id, chunks.c0.id]);

        const words = await engine.search(query(kb, "bm25", { text: "人民 energy plants" }));
        expect(words.length).toBeGreaterThan(1);
        const best = await engine.search(query(kb, "bm25", { text: "人民 energy plants", minScore: words[0].score * 0.999 }));
        expect(ids(best)).toEqual([words[0].chunk.id]);

        const fusedAll = await engine.search(query(kb, "hybrid", { text: "fox", vector: new Float32Array([1, 0, 0, 0]) }));
        const fusedTop = await engine.search(query(kb, "hybrid", { text: "fox", vector: new Float32Array([1, 0, 0, 0]), minScore: 1 / 61 + 1 / 62 }));
        expect(fusedAll.length).toBeGreaterThan(1);
        expect(ids(fusedTop)).toEqual([chunks.a0.id]);
      });
    });

    describe("several knowledge bases", () => {
      it("merges hits from every knowledge base asked for by score", async () => {
        const first = await seed();
        const kb2 = uniqueId("kb_contract");
        const doc = uniqueId("doc_algae");
        const algae = makeChunk(kb2, doc, 0, "Photosynthesis in algae also produces oxygen.", [0.1, 1, 0, 0]);
        await engine.ensureKnowledgeBase(kb2, DIM);
        await engine.replaceDocumentChunks(kb2, doc, "algae.txt", [algae]);

        const words = await engine.search(query([first.kb, kb2], "bm25", { text: "photosynthesis" }));
        expect(ids(words).sort()).toEqual([first.chunks.a1.id, algae.id].sort());
        const vector = await engine.search(query([first.kb, kb2], "vector", { vector: new Float32Array([0, 1, 0, 0]), topK: 2 }));
        expect(ids(vector)).toEqual([first.chunks.a1.id, algae.id]);
        expect(vector[1].fileName).toBe("algae.txt");
        expect(vector[1].chunk.knowledgeBaseId).toBe(kb2);
        const hybrid = await engine.search(query([first.kb, kb2], "hybrid", { text: "algae", vector: new Float32Array([0, 1, 0, 0]), topK: 1 }));
        expect(ids(hybrid)).toEqual([algae.id]);
      });

      it("keeps a base's keyword scores and order when another base is added or grows", async () => {
        // BM25's statistics (how many chunks, how long on average, how many hold each term) are the
        // base's own, as with an index per base: another base that repeats one of this base's rare
        // words must not make it common here.
        const kb = uniqueId("kb_contract");
        const doc = uniqueId("doc_weather");
        const mine = RARE_WORD_TEXTS.map((text, i) => makeChunk(kb, doc, i, text, [1, i, 0, 0]));
        await engine.ensureKnowledgeBase(kb, DIM);
        await engine.replaceDocumentChunks(kb, doc, "weather.txt", mine);
        const search = async () =>
          (await engine.search(query(kb, "bm25", { text: RARE_WORD_QUESTION }))).map((hit) => ({ id: hit.chunk.id, score: hit.score }));
        const before = await search();
        // Twice the zephyr beats one quokka while both words are equally rare.
        expect(before.map((hit) => hit.id)).toEqual([mine[0].id, mine[1].id, mine[3].id]);

        const other = uniqueId("kb_contract");
        await engine.ensureKnowledgeBase(other, DIM);
        const sails = uniqueId("doc_sails");
        await engine.replaceDocumentChunks(other, sails, "zephyrs.txt", commonWordTexts().map((text, i) => makeChunk(other, sails, i, text, [0, 1, 0, 0])));
        expect(await search()).toEqual(before);
        // It grows with chunks that share none of the words, which changes only its own counts and lengths.
        const unrelated = Array.from({ length: 30 }, (_, i) => `Tariff schedule ${i}`);
        const tariffs = uniqueId("doc_tariffs");
        await engine.replaceDocumentChunks(other, tariffs, "tariffs.txt", unrelated.map((text, i) => makeChunk(other, tariffs, i, text, [0, 0, 1, 0])));
        expect(await search()).toEqual(before);
        // Both bases searched together: each hit keeps the score its own base gives it.
        const both = await engine.search(query([kb, other], "bm25", { text: RARE_WORD_QUESTION, topK: 50 }));
        for (const hit of before) expect(both.find((h) => h.chunk.id === hit.id)?.score).toBeCloseTo(hit.score, 6);
      });

      it("reports a knowledge base without storage as NotFound", async () => {
        const { kb } = await seed();
        await expect(engine.search(query([kb, uniqueId("kb_missing")], "bm25", { text: "fox" }))).rejects.toBeInstanceOf(NotFoundError);
        await expect(
          engine.replaceDocumentChunks(uniqueId("kb_missing"), "doc", "x.txt", [makeChunk("kb", "doc", 0, "text", [1, 0, 0, 0], uniqueId("chunk"))]),
        ).rejects.toBeInstanceOf(NotFoundError);
      });
    });

    describe("document vectors", () => {
      // docA's whole-document vector points where neither of its chunks does; docB and docC have none.
      const WHOLE_A = [0.8, 0.6, 0, 0];
      const Q = new Float32Array([0.8, 0.6, 0, 0]);
      async function seedWithDocumentVector(): Promise<Seeded> {
        const s = await seed();
        await engine.replaceDocumentChunks(s.kb, s.docA, "animals-and-plants.txt", [s.chunks.a0, s.chunks.a1], new Float32Array(WHOLE_A));
        return s;
      }

      it("ranks and scores vector hits by the better cosine of their chunk and their whole document, placed on the document's best chunk", async () => {
        const s = await seedWithDocumentVector();
        expect(await engine.hasDocumentVector(s.kb, s.docA)).toBe(true);
        expect(await engine.hasDocumentVector(s.kb, s.docB)).toBe(false);
        const hits = await engine.search(query(s.kb, "vector", { vector: Q }));
        // Chunks alone: c0 (0.96), a0 (0.8), a1 (0.6). docA's own vector (1.0) joins a0, its best chunk,
        // and lifts it to the top of the one vector list.
        expect(ids(hits).slice(0, 3)).toEqual([s.chunks.a0.id, s.chunks.c0.id, s.chunks.a1.id]);
        expect(hits[0].explain).toMatchObject({ documentRank: 1, vectorRank: 1 });
        expect(hits[0].explain.documentScore).toBeCloseTo(1, 4);
        expect(hits[0].explain.vectorScore).toBeCloseTo(1, 4);
        expect(hits[0].explain.fusedScore).toBeCloseTo(1 / 61, 10);
        expect(hits[0].score).toBeCloseTo(1, 4);
        expect(hits.map((hit) => hit.explain.vectorRank)).toEqual(hits.map((_, i) => i + 1));
        expect(hits[1].score).toBeCloseTo(cosine([...Q], s.vectors.c0), 4);
        expect(hits.filter((hit) => hit.explain.documentRank)).toHaveLength(1);
        for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hits[i].score);
        expect(ids(await engine.search(query(s.kb, "vector", { vector: Q, minScore: 0.9 })))).toEqual([s.chunks.a0.id, s.chunks.c0.id]);
      });

      it("fuses BM25 with ONE vector list that already holds the document level", async () => {
        const s = await seedWithDocumentVector();
        const hits = await engine.search(query(s.kb, "hybrid", { text: "photosynthesis", vector: Q }));
        // The vector list: a0 with docA's cosine (1.0), c0 (0.96), a1 (0.6). a1 is BM25's only hit.
        expect(hits[0].chunk.id).toBe(s.chunks.a1.id);
        expect(hits[0].explain).toMatchObject({ bm25Rank: 1, vectorRank: 3 });
        expect(hits[0].explain.fusedScore).toBeCloseTo(1 / 61 + 1 / 63, 10);
        const a0 = hits.find((hit) => hit.chunk.id === s.chunks.a0.id)!;
        expect(a0.explain).toMatchObject({ bm25Rank: 0, vectorRank: 1, documentRank: 1 });
        expect(a0.explain.fusedScore).toBeCloseTo(1 / 61, 10);
        // The vector weight counts for both levels: a model that cannot read the question reads no document either.
        const wordsOnly = await engine.search(query(s.kb, "hybrid", { text: "photosynthesis", vector: Q, weights: { bm25: 1, vector: 0 } }));
        expect(wordsOnly[0].explain.fusedScore).toBeCloseTo(1 / 61, 10);
        expect(wordsOnly.find((hit) => hit.chunk.id === s.chunks.a0.id)!.explain.fusedScore).toBe(0);
      });

      it("gives a document found by its chunk and by its whole vector one dense vote, not two", async () => {
        const s = await seed();
        // docC (one chunk, c0) is embedded whole as well; the question points at it.
        await engine.replaceDocumentChunks(s.kb, s.docC, "court.pdf", [s.chunks.c0], new Float32Array(s.vectors.c0));
        const toC = new Float32Array(s.vectors.c0);
        const hits = await engine.search(query(s.kb, "hybrid", { text: "photosynthesis", vector: toC }));
        // BM25: a1. Chunk vectors: c0 (1.0), a1 (0.8), a0 (0.6). Document vectors: docC (1.0).
        // Three fused lists would put c0 first (1/61 + 1/61 > 1/61 + 1/62); two put a1 first.
        expect(ids(hits).slice(0, 2)).toEqual([s.chunks.a1.id, s.chunks.c0.id]);
        expect(hits[0].explain).toMatchObject({ bm25Rank: 1, vectorRank: 2 });
        expect(hits[0].score).toBeCloseTo(1 / 61 + 1 / 62, 10);
        expect(hits[1].explain).toMatchObject({ bm25Rank: 0, vectorRank: 1, documentRank: 1 });
        expect(hits[1].score).toBeCloseTo(1 / 61, 10);
        // Vector mode ranks by the same list.
        expect(ids(await engine.search(query(s.kb, "vector", { vector: toC, topK: 3 })))).toEqual([s.chunks.c0.id, s.chunks.a1.id, s.chunks.a0.id]);
      });

      it("replaces, disables and deletes the document vector with the document", async () => {
        const s = await seedWithDocumentVector();
        await engine.setDocumentEnabled(s.kb, s.docA, false);
        expect((await engine.search(query(s.kb, "vector", { vector: Q }))).filter((hit) => hit.explain.documentRank)).toEqual([]);
        await engine.setDocumentEnabled(s.kb, s.docA, true);
        expect((await engine.search(query(s.kb, "vector", { vector: Q })))[0].explain.documentRank).toBe(1);
        await engine.replaceDocumentChunks(s.kb, s.docA, "animals-and-plants.txt", [s.chunks.a0, s.chunks.a1]);
        expect(await engine.hasDocumentVector(s.kb, s.docA)).toBe(false);
        expect(ids(await engine.search(query(s.kb, "vector", { vector: Q, topK: 1 })))).toEqual([s.chunks.c0.id]);
        await engine.replaceDocumentChunks(s.kb, s.docA, "animals-and-plants.txt", [s.chunks.a0, s.chunks.a1], new Float32Array(WHOLE_A));
        await engine.deleteDocument(s.kb, s.docA);
        expect(await engine.hasDocumentVector(s.kb, s.docA)).toBe(false);
        expect((await engine.search(query(s.kb, "vector", { vector: Q }))).map((hit) => hit.chunk.documentId)).not.toContain(s.docA);
      });

      it("writes nothing when the document vector has the wrong dimension", async () => {
        const s = await seed();
        const moved = { ...s.chunks.a0, text: "A document whose write is refused." };
        await expect(engine.replaceDocumentChunks(s.kb, s.docA, "a.txt", [moved], new Float32Array([1, 0, 0]))).rejects.toBeInstanceOf(FailedPreconditionError);
        expect(await engine.getChunks([s.chunks.a0.id])).toEqual([withoutVector(s.chunks.a0)]);
        expect(await engine.hasDocumentVector(s.kb, s.docA)).toBe(false);
      });

      it("carries document vectors through a change of model: embedded again into the shadow, swapped in with the chunks", async () => {
        const s = await seedWithDocumentVector();
        const NEW = { a0: [1, 0, 0], a1: [0, 1, 0], b0: [0, 0.6, 0.8], b1: [0, 0.8, 0.6], c0: [0.8, 0, 0.6] };
        await engine.beginShadow(s.kb, 3);
        for (const doc of [s.docA, s.docB, s.docC]) {
          const chunks = (await engine.documentChunks(s.kb, doc)).map((chunk) => ({
            ...chunk,
            vector: new Float32Array(NEW[(Object.keys(s.chunks) as (keyof Seeded["chunks"])[]).find((k) => s.chunks[k].id === chunk.id)!]),
          }));
          const whole = (await engine.hasDocumentVector(s.kb, doc)) ? new Float32Array([0, 0, 1]) : undefined;
          await engine.writeShadowChunks(s.kb, doc, "f.txt", chunks, whole);
        }
        await expect(engine.writeShadowChunks(s.kb, s.docA, "f.txt", [], new Float32Array([0, 0, 1, 0]))).rejects.toBeInstanceOf(FailedPreconditionError);
        // Until the commit, the live document vector answers.
        expect((await engine.search(query(s.kb, "vector", { vector: Q })))[0].explain.documentRank).toBe(1);
        await engine.commitShadow(s.kb);
        const hits = await engine.search(query(s.kb, "vector", { vector: new Float32Array([0, 0, 1]) }));
        const documentHit = hits.find((hit) => hit.explain.documentRank)!;
        expect(documentHit.chunk.documentId).toBe(s.docA);
        expect(documentHit.explain.documentScore).toBeCloseTo(1, 4);
        expect(await engine.hasDocumentVector(s.kb, s.docA)).toBe(true);
        expect(await engine.hasDocumentVector(s.kb, s.docB)).toBe(false);
      });
    });

    describe("change of embedding model (shadow vectors)", () => {
      // The new model's vectors are 3-dimensional, so a search with the wrong model's vector fails loudly.
      const NEW = { a0: [1, 0, 0], a1: [0, 1, 0], b0: [0, 0, 1], b1: [0, 0.6, 0.8], c0: [0.8, 0, 0.6] };
      const reembedded = (chunks: Chunk[], vectors: Record<string, number[]>, s: Seeded) =>
        chunks.map((chunk) => {
          const key = (Object.keys(s.chunks) as (keyof Seeded["chunks"])[]).find((k) => s.chunks[k].id === chunk.id)!;
          return { ...chunk, vector: new Float32Array(vectors[key]) };
        });
      const shadowAll = async (s: Seeded, docs = [s.docA, s.docB, s.docC]) => {
        for (const doc of docs) await engine.writeShadowChunks(s.kb, doc, "f.txt", reembedded(await engine.documentChunks(s.kb, doc), NEW, s));
      };

      it("fills a shadow beside the live vectors, which searches keep using until the commit swaps it in", async () => {
        const s = await seed();
        expect(await engine.documentChunks(s.kb, s.docA)).toEqual([withoutVector(s.chunks.a0), withoutVector(s.chunks.a1)]);
        await engine.beginShadow(s.kb, 3);
        expect(await engine.shadowPendingDocuments(s.kb)).toEqual([s.docA, s.docB, s.docC].sort());
        await expect(engine.writeShadowChunks(s.kb, s.docA, "f.txt", [{ ...s.chunks.a0, vector: new Float32Array(s.vectors.a0) }])).rejects.toBeInstanceOf(FailedPreconditionError);
        await shadowAll(s, [s.docA]);
        expect(await engine.shadowPendingDocuments(s.kb)).toEqual([s.docB, s.docC].sort());
        // Still the old model's 4 dimensions.
        expect(ids(await engine.search(query(s.kb, "vector", { vector: new Float32Array(s.vectors.b0), topK: 1 })))).toEqual([s.chunks.b0.id]);
        await expect(engine.search(query(s.kb, "vector", { vector: new Float32Array(NEW.b0) }))).rejects.toBeInstanceOf(FailedPreconditionError);

        await shadowAll(s, [s.docB, s.docC]);
        expect(await engine.shadowPendingDocuments(s.kb)).toEqual([]);
        await engine.commitShadow(s.kb);
        const hits = await engine.search(query(s.kb, "vector", { vector: new Float32Array([0, 0.6, 0.8]), topK: 2 }));
        expect(ids(hits)).toEqual([s.chunks.b1.id, s.chunks.b0.id]);
        expect(hits[0].score).toBeCloseTo(1, 5);
        expect(hits[1].score).toBeCloseTo(0.8, 5);
        await expect(engine.search(query(s.kb, "vector", { vector: new Float32Array(s.vectors.b0) }))).rejects.toBeInstanceOf(FailedPreconditionError);
        expect(ids(await engine.search(query(s.kb, "bm25", { text: "photosynthesis" })))).toEqual([s.chunks.a1.id]);
        expect(await engine.getChunks([s.chunks.c0.id])).toEqual([withoutVector(s.chunks.c0)]);
        await expect(engine.shadowPendingDocuments(s.kb)).rejects.toBeInstanceOf(FailedPreconditionError);
      });

      it("takes a document out of the shadow when its shadow chunks are written as none (deleted where the shadow was not known)", async () => {
        const s = await seed();
        await engine.beginShadow(s.kb, 3);
        await shadowAll(s);
        await engine.writeShadowChunks(s.kb, s.docB, "f.txt", []);
        // Live still has it, the shadow no longer: pending again.
        expect(await engine.shadowPendingDocuments(s.kb)).toEqual([s.docB]);
        await engine.deleteDocument(s.kb, s.docB);
        expect(await engine.shadowPendingDocuments(s.kb)).toEqual([]);
        await engine.commitShadow(s.kb);
        const hits = await engine.search(query(s.kb, "vector", { vector: new Float32Array([0, 0, 1]), topK: 10 }));
        expect(hits.map((hit) => hit.chunk.documentId)).not.toContain(s.docB);
      });

      it("keeps the shadow true to live writes: a replaced document is pending again, a deleted one gone, a disabled one disabled", async () => {
        const s = await seed();
        await engine.beginShadow(s.kb, 3);
        await shadowAll(s);
        const replacement = makeChunk(s.kb, s.docA, 0, "Tidal forces stretch the oceans twice a day.", [1, 0, 0, 0], uniqueId("chunk"));
        await engine.replaceDocumentChunks(s.kb, s.docA, "tides.txt", [replacement]);
        await engine.deleteDocument(s.kb, s.docB);
        await engine.setDocumentEnabled(s.kb, s.docC, false);
        expect(await engine.shadowPendingDocuments(s.kb)).toEqual([s.docA]);
        await engine.writeShadowChunks(s.kb, s.docA, "tides.txt", [{ ...replacement, vector: new Float32Array([0, 0, 1]) }]);
        expect(await engine.shadowPendingDocuments(s.kb)).toEqual([]);
        await engine.commitShadow(s.kb);
        const hits = await engine.search(query(s.kb, "vector", { vector: new Float32Array([0, 0, 1]) }));
        expect(ids(hits)).toEqual([replacement.id]);
      });

      it("drops a shadow and keeps the live vectors; a new shadow starts empty", async () => {
        const s = await seed();
        await engine.beginShadow(s.kb, 3);
        await shadowAll(s, [s.docA]);
        await engine.dropShadow(s.kb);
        await expect(engine.shadowPendingDocuments(s.kb)).rejects.toBeInstanceOf(FailedPreconditionError);
        expect(ids(await engine.search(query(s.kb, "vector", { vector: new Float32Array(s.vectors.a1), topK: 1 })))).toEqual([s.chunks.a1.id]);
        await engine.beginShadow(s.kb, 3);
        await engine.beginShadow(s.kb, 3);
        expect(await engine.shadowPendingDocuments(s.kb)).toEqual([s.docA, s.docB, s.docC].sort());
        await engine.dropKnowledgeBase(s.kb);
      });
    });

    describe("chunk edits", () => {
      const edited = (chunk: EmbeddedChunk, text: string, vector: number[], version = 2): EmbeddedChunk => ({
        ...chunk,
        text,
        vector: new Float32Array(vector),
        revision: { version, manual: false, originalText: chunk.text },
      });

      it("edits a chunk in place: the new text and vector are searchable at once, the old text is gone, the id and the document vector stay", async () => {
        const s = await seed();
        await engine.replaceDocumentChunks(s.kb, s.docA, "animals-and-plants.txt", [s.chunks.a0, s.chunks.a1], new Float32Array([0.5, 0.5, 0.5, 0.5]));
        const edit = edited(s.chunks.a0, "The quick brown fox naps beside the quokka enclosure.", [0, 0, 0.6, 0.8]);
        await engine.putChunk(s.kb, s.docA, "animals-and-plants.txt", edit);

        expect(ids(await engine.search(query(s.kb, "bm25", { text: "quokka" })))).toEqual([s.chunks.a0.id]);
        expect(ids(await engine.search(query(s.kb, "bm25", { text: "river" })))).toEqual([]);
        const [nearest] = await engine.search(query(s.kb, "vector", { vector: new Float32Array([0, 0, 0.6, 0.8]), topK: 1 }));
        expect(nearest.chunk.id).toBe(s.chunks.a0.id);
        expect(nearest.score).toBeCloseTo(1, 5);
        expect(nearest.fileName).toBe("animals-and-plants.txt");
        const [stored] = await engine.getChunks([s.chunks.a0.id]);
        expect(stored).toEqual(withoutVector(edit));
        expect((await engine.documentChunks(s.kb, s.docA)).map((c) => c.text)).toEqual([edit.text, s.chunks.a1.text]);
        expect(await engine.hasDocumentVector(s.kb, s.docA)).toBe(true);
        await engine.dropKnowledgeBase(s.kb);
      });

      it("adds a chunk with a new id to its document, searchable in both lists under the document's flag", async () => {
        const s = await seed();
        const manual: EmbeddedChunk = {
          ...makeChunk(s.kb, s.docB, 2, "Quokkas file their tax returns by hand.", [0.8, 0, 0, 0.6], uniqueId("manual")),
          revision: { version: 1, manual: true, originalText: "" },
        };
        await engine.putChunk(s.kb, s.docB, "tax-and-law.md", manual);
        expect(ids(await engine.search(query(s.kb, "bm25", { text: "quokkas" })))).toEqual([manual.id]);
        expect(ids(await engine.search(query(s.kb, "vector", { vector: new Float32Array([0.8, 0, 0, 0.6]), topK: 1 })))).toEqual([manual.id]);
        expect((await engine.documentChunks(s.kb, s.docB)).map((c) => c.id)).toEqual([s.chunks.b0.id, s.chunks.b1.id, manual.id]);
        expect(await engine.getChunksAt([{ knowledgeBaseId: s.kb, documentId: s.docB, index: 2 }])).toEqual([withoutVector(manual)]);

        await engine.setDocumentEnabled(s.kb, s.docB, false);
        const other = { ...manual, id: uniqueId("manual"), index: 3 };
        await engine.putChunk(s.kb, s.docB, "tax-and-law.md", other);
        expect(ids(await engine.search(query(s.kb, "bm25", { text: "quokkas" })))).toEqual([]);
        await engine.setDocumentEnabled(s.kb, s.docB, true);
        expect(ids(await engine.search(query(s.kb, "bm25", { text: "quokkas" }))).sort()).toEqual([manual.id, other.id].sort());
        await engine.dropKnowledgeBase(s.kb);
      });

      it("keeps a disabled chunk out of every list, through its document's enabling, until it is enabled", async () => {
        const s = await seed();
        await engine.setChunkDisabled(s.kb, s.chunks.a1.id, true);
        const searches = async () => ({
          bm25: ids(await engine.search(query(s.kb, "bm25", { text: "photosynthesis sunlight" }))),
          vector: ids(await engine.search(query(s.kb, "vector", { vector: new Float32Array(s.vectors.a1), topK: 5 }))),
        });
        expect((await searches()).bm25).toEqual([]);
        expect((await searches()).vector).not.toContain(s.chunks.a1.id);
        expect((await searches()).vector).toContain(s.chunks.a0.id);
        expect(await engine.getChunks([s.chunks.a1.id])).toEqual([{ ...withoutVector(s.chunks.a1), disabled: true }]);

        await engine.setDocumentEnabled(s.kb, s.docA, false);
        await engine.setDocumentEnabled(s.kb, s.docA, true);
        expect((await searches()).bm25).toEqual([]);
        expect((await searches()).vector).toContain(s.chunks.a0.id);

        await engine.setChunkDisabled(s.kb, s.chunks.a1.id, false);
        expect((await searches()).bm25).toEqual([s.chunks.a1.id]);
        expect((await searches()).vector[0]).toBe(s.chunks.a1.id);
        expect(await engine.getChunks([s.chunks.a1.id])).toEqual([withoutVector(s.chunks.a1)]);
        await expect(engine.setChunkDisabled(s.kb, "no-such-chunk", true)).rejects.toBeInstanceOf(NotFoundError);
        await engine.dropKnowledgeBase(s.kb);
      });

      it("stores a document's edit markers when its chunks are replaced (a re-ingest carrying edits over)", async () => {
        const s = await seed();
        const carried = edited(s.chunks.b0, "Income tax returns are due on 30 April.", s.vectors.b0, 3);
        const off = { ...s.chunks.b1, disabled: true };
        await engine.replaceDocumentChunks(s.kb, s.docB, "tax-and-law.md", [carried, off]);
        expect(await engine.documentChunks(s.kb, s.docB)).toEqual([withoutVector(carried), withoutVector(off)]);
        expect(ids(await engine.search(query(s.kb, "bm25", { text: "刑事诉讼" })))).not.toContain(off.id);
        expect(ids(await engine.search(query(s.kb, "bm25", { text: "april" })))).toEqual([carried.id]);
        await engine.dropKnowledgeBase(s.kb);
      });

      it("makes a running change of model embed an edited chunk's document again", async () => {
        const s = await seed();
        await engine.beginShadow(s.kb, 3);
        for (const [doc, chunks] of [[s.docA, [s.chunks.a0, s.chunks.a1]], [s.docB, [s.chunks.b0, s.chunks.b1]], [s.docC, [s.chunks.c0]]] as const) {
          await engine.writeShadowChunks(s.kb, doc, "f.txt", chunks.map((c) => ({ ...c, vector: new Float32Array([1, 0, 0]) })));
        }
        expect(await engine.shadowPendingDocuments(s.kb)).toEqual([]);
        await engine.putChunk(s.kb, s.docC, "court.pdf", edited(s.chunks.c0, "人民法院依法审理民事案件。", s.vectors.c0));
        expect(await engine.shadowPendingDocuments(s.kb)).toEqual([s.docC]);
        await engine.dropKnowledgeBase(s.kb);
      });
    });

    describe("availability", () => {
      it("fails with UnavailableError after close, never with an empty result", async () => {
        const own = await factory();
        try {
          const kb = uniqueId("kb_contract");
          await own.engine.ensureKnowledgeBase(kb, DIM);
          await own.engine.close();
          await expect(own.engine.search(query(kb, "bm25", { text: "fox" }))).rejects.toBeInstanceOf(UnavailableError);
          await expect(own.engine.getChunks(["x"])).rejects.toBeInstanceOf(UnavailableError);
        } finally {
          await own.cleanup();
        }
      });
    });
  });
}
