// The embedded Quarry end to end, over real HTTP: documents in every built-in format in, progress out, retrieval in
// every mode, answers whose citations lead back to the uploaded files, and the document lifecycle
// (re-upload, new version, disable, delete). One instance and one knowledge base serve the whole
// file, because ingesting with the local model is the slow part; each test adds to what the
// previous ones built, so they run in order.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { ChunkingStrategy, DocumentStatus, RetrievalMode, type SearchHit } from "../../gen/quarry/common/v1/common_pb.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { fixtureBytes, type FixtureName } from "../fixtures/fixture-documents.ts";
import { CHINESE_NOTES_WORD, CHINESE_RULES_FACT, COMPANY_FACT, CUSTOMERS_FACT, FILING_FACT, PDF_FACT } from "../fixtures/fixture-texts.ts";
import {
  collectChat,
  expectCitationFromFile,
  expectOrderedProgressToReady,
  flat,
  lastUpdate,
  pdfPageTexts,
  snippetBody,
  upload,
  uploadStreamed,
  watchAll,
} from "./e2e-helpers.ts";

const KB = "corpus";

// Uploaded in this order: the first four in one message each, the Chinese two as a client stream.
const UNARY: FixtureName[] = ["company.md", "lighthouses.pdf", "customers.csv", "filing.html"];
const STREAMED: FixtureName[] = ["notes-zh.md", "rules-zh.md"];

// Questions about the fixtures: the file, and a phrase of the passage that answers.
const EN_QUESTION = { q: COMPANY_FACT.question, file: "company.md", phrase: COMPANY_FACT.phrase };
const PDF_QUESTION = { q: PDF_FACT.question, file: "lighthouses.pdf", phrase: PDF_FACT.phrase, page: PDF_FACT.page };
const CSV_QUESTION = { q: CUSTOMERS_FACT.question, file: "customers.csv", phrase: CUSTOMERS_FACT.phrase };
const HTML_QUESTION = { q: FILING_FACT.question, file: "filing.html", phrase: FILING_FACT.phrase };
// Article 14: an overdue book is to be returned within fifteen days of the reminder.
const ZH_QUESTION = { q: CHINESE_RULES_FACT.question, file: "rules-zh.md", phrase: CHINESE_RULES_FACT.phrase };

const bytes = new Map<string, Buffer>();
const corpusBytes = (name: string) => bytes.get(name)!;
/** The original text of each uploaded file, to check what citations and hits claim. */
const sourceOf = (fileName: string) => corpusBytes(fileName).toString("utf8");

describe("embedded Quarry over HTTP", () => {
  let quarry: EmbeddedQuarryFixture;
  const ids = new Map<string, string>();
  let pdfPages: string[];

  beforeAll(async () => {
    for (const name of [...UNARY, ...STREAMED, "prose.txt"] as FixtureName[]) bytes.set(name, await fixtureBytes(name));
    quarry = await startEmbeddedQuarry();
    pdfPages = await pdfPageTexts(corpusBytes("lighthouses.pdf"));
  });
  afterAll(async () => {
    await quarry?.stop();
  });

  const search = (query: string, mode: RetrievalMode, topK = 5) =>
    quarry.client.search({ query, knowledgeBases: [KB], settings: { mode, topK } });

  /** For a PDF hit or citation, every word of the text must be on the pages it claims. */
  const pdfSource = (page: number, pageEnd: number) => {
    expect(page, "a PDF chunk without a page").toBeGreaterThan(0);
    expect(pageEnd).toBeGreaterThanOrEqual(page);
    return pdfPages.slice(page - 1, pageEnd).join("\n");
  };

  it("creates a knowledge base over gRPC, with the model's dimension and chunking defaults", async () => {
    const grpc = quarry.clientFor("grpc");
    const { knowledgeBase } = await grpc.createKnowledgeBase({ name: KB, description: "real documents" });
    expect(knowledgeBase!.name).toBe(KB);
    expect(knowledgeBase!.embeddingDimension).toBe(384);
    expect(knowledgeBase!.embeddingModel).not.toBe("");
    expect(knowledgeBase!.chunking!.strategy).toBe(ChunkingStrategy.RECURSIVE);
    expect(knowledgeBase!.chunking!.chunkSize).toBeGreaterThan(0);
    expect(knowledgeBase!.chunking!.chunkSize).toBeLessThanOrEqual(256);
    const listed = await quarry.clientFor("grpc-web").listKnowledgeBases({});
    expect(listed.knowledgeBases.map((kb) => kb.name)).toContain(KB);
  });

  it("ingests English and Chinese documents, uploaded whole and streamed, with ordered progress to READY", async () => {
    for (const name of UNARY) {
      const res = await upload(quarry.client, KB, name, corpusBytes(name));
      expect(res.unchanged).toBe(false);
      expect(res.document!.fileName).toBe(name);
      expect(Number(res.document!.sizeBytes)).toBe(corpusBytes(name).byteLength);
      ids.set(name, res.document!.id);
    }
    const grpc = quarry.clientFor("grpc");
    for (const name of STREAMED) {
      const res = await uploadStreamed(grpc, KB, name, corpusBytes(name), 3000);
      expect(res.unchanged).toBe(false);
      expect(res.document!.fileName).toBe(name);
      expect(Number(res.document!.sizeBytes), `${name} arrived incomplete`).toBe(corpusBytes(name).byteLength);
      ids.set(name, res.document!.id);
    }
    expect(new Set(ids.values()).size).toBe(UNARY.length + STREAMED.length);

    // Server streaming over gRPC-Web (HTTP/1.1).
    const log = await watchAll(quarry.clientFor("grpc-web"), [...ids.values()]);
    for (const [name, id] of ids) {
      expectOrderedProgressToReady(log.get(id)!, name);
      expect(lastUpdate(log, id).chunkCount, `${name} is ready without chunks`).toBeGreaterThan(0);
    }
    // Whether the middle phases are seen live is responsiveness.test.ts's business: here the
    // watch may start after the work is done.
  });

  it("lists the documents with their counts, and the knowledge base adds them up", async () => {
    const { documents } = await quarry.client.listDocuments({ knowledgeBase: KB });
    expect(documents.map((d) => d.fileName).sort()).toEqual([...UNARY, ...STREAMED].sort());
    for (const d of documents) {
      expect(d.status, `${d.fileName}: ${d.errorMessage}`).toBe(DocumentStatus.READY);
      expect(d.progressPercent).toBe(100);
      expect(d.chunkCount, d.fileName).toBeGreaterThan(0);
      expect(d.tokenCount, d.fileName).toBeGreaterThanOrEqual(d.chunkCount);
      expect(d.enabled).toBe(true);
      expect(d.contentHash).toMatch(/^[0-9a-f]{64}$/);
    }
    const { knowledgeBase } = await quarry.client.getKnowledgeBase({ knowledgeBase: KB });
    expect(Number(knowledgeBase!.documentCount)).toBe(documents.length);
    expect(Number(knowledgeBase!.chunkCount)).toBe(documents.reduce((n, d) => n + d.chunkCount, 0));
    expect(Number(knowledgeBase!.tokenCount)).toBe(documents.reduce((n, d) => n + d.tokenCount, 0));
  });

  const explainFits = (hits: SearchHit[], mode: RetrievalMode) => {
    hits.forEach((hit, i) => {
      const e = hit.explain!;
      const at = `${RetrievalMode[mode]} hit ${i + 1} (${hit.fileName})`;
      if (i > 0) expect(hit.score, `${at}: hits out of score order`).toBeLessThanOrEqual(hits[i - 1].score);
      if (mode === RetrievalMode.BM25) {
        expect(e.bm25Rank, at).toBe(i + 1);
        expect(e.vectorRank, at).toBe(0);
        expect(hit.score, at).toBeCloseTo(e.bm25Score, 6);
      } else if (mode === RetrievalMode.VECTOR) {
        // Chunk vectors and (for documents embedded whole) document vectors: the better cosine.
        expect(e.vectorRank + e.documentRank, `${at}: in neither vector list`).toBeGreaterThan(0);
        expect(e.bm25Rank, at).toBe(0);
        const cosines = [...(e.vectorRank ? [e.vectorScore] : []), ...(e.documentRank ? [e.documentScore] : [])];
        expect(hit.score, at).toBeCloseTo(Math.max(...cosines), 6);
      } else {
        expect(e.bm25Rank + e.vectorRank + e.documentRank, `${at}: in no list`).toBeGreaterThan(0);
        expect(hit.score, at).toBeCloseTo(e.fusedScore, 9);
        if (e.bm25Rank === 0) expect(e.bm25Score, at).toBe(0);
        if (e.vectorRank === 0) expect(e.vectorScore, at).toBe(0);
      }
    });
  };

  const findAnswer = (hits: SearchHit[], file: string, phrase: string) =>
    hits.findIndex((h) => h.fileName === file && flat(h.chunk!.text).includes(phrase));

  it.each([
    ["bm25", RetrievalMode.BM25],
    ["vector", RetrievalMode.VECTOR],
    ["hybrid", RetrievalMode.HYBRID],
  ])("search in %s mode finds the passage that answers, with a consistent explanation", async (_name, mode) => {
    for (const { q, file, phrase } of [EN_QUESTION, PDF_QUESTION]) {
      const { hits } = await search(q, mode);
      explainFits(hits, mode);
      const at = findAnswer(hits, file, phrase);
      expect(at, `${RetrievalMode[mode]} "${q}": ${hits.map((h) => `${h.fileName}: ${flat(h.chunk!.text).slice(0, 60)}`).join(" | ")}`)
        .toBeGreaterThanOrEqual(0);
      expect(at, `${RetrievalMode[mode]} "${q}" ranked the answer ${at + 1}`).toBeLessThan(3);
      const hit = hits[at];
      expect(hit.chunk!.documentId).toBe(ids.get(file));
      if (mode === RetrievalMode.HYBRID) {
        // Both retrievers found this one, and the explanation says so.
        expect(hit.explain!.bm25Rank).toBeGreaterThan(0);
        expect(hit.explain!.vectorRank).toBeGreaterThan(0);
      }
      if (file.endsWith(".pdf")) {
        expect(hit.chunk!.page).toBe(PDF_QUESTION.page);
        expect(flat(pdfSource(hit.chunk!.page, hit.chunk!.pageEnd))).toContain(phrase);
      } else {
        expect(flat(sourceOf(file))).toContain(flat(hit.chunk!.text));
      }
    }
  });

  it("finds table rows, HTML and Chinese passages by keyword and in hybrid mode", async () => {
    for (const mode of [RetrievalMode.BM25, RetrievalMode.HYBRID]) {
      for (const { q, file, phrase } of [CSV_QUESTION, HTML_QUESTION, ZH_QUESTION]) {
        const { hits } = await search(q, mode);
        explainFits(hits, mode);
        const at = findAnswer(hits, file, phrase);
        expect(at, `${RetrievalMode[mode]} "${q}": ${hits.map((h) => `${h.fileName}: ${flat(h.chunk!.text).slice(0, 60)}`).join(" | ")}`)
          .toBeGreaterThanOrEqual(0);
        expect(at, `${RetrievalMode[mode]} "${q}" ranked the answer ${at + 1}`).toBeLessThan(3);
      }
    }
  });

  it("matches a two-character Chinese word in bm25 mode", async () => {
    // 蜂王 (queen bee) occurs only in the beekeeping notes.
    const word = CHINESE_NOTES_WORD;
    expect(sourceOf("notes-zh.md")).toContain(word);
    for (const other of [...UNARY.filter((n) => !n.endsWith(".pdf")), STREAMED[1]]) expect(sourceOf(other)).not.toContain(word);
    expect(pdfPages.join("\n")).not.toContain(word);
    const { hits } = await search(word, RetrievalMode.BM25, 10);
    expect(hits.length).toBeGreaterThan(0);
    // The index also holds single characters (so differently segmented words still meet), so a
    // chunk sharing only 度 may follow; every chunk with the whole word must rank above those.
    const whole = hits.map((hit) => hit.chunk!.text.includes(word));
    expect(whole[0], "the best hit holds the word").toBe(true);
    expect(whole.slice(whole.indexOf(false) < 0 ? whole.length : whole.indexOf(false)), "a partial match outranked the word").not.toContain(true);
    for (const hit of hits.filter((h) => h.chunk!.text.includes(word))) expect(hit.fileName).toBe("notes-zh.md");
  });

  /** Every citation must lead to text of the document it names, on the page it names. */
  const expectCitationsResolve = (citations: Awaited<ReturnType<typeof collectChat>>["citations"]) => {
    const uploaded = new Map([...ids].map(([name, id]) => [id, name]));
    for (const c of citations) {
      expect(uploaded.get(c.documentId), `citation [${c.marker}] names a document never uploaded`).toBe(c.fileName);
      expect(c.chunkId).not.toBe("");
      expect(c.endOffset).toBeGreaterThan(c.startOffset);
      if (c.fileName.endsWith(".pdf")) expectCitationFromFile(c, pdfSource(c.page, c.pageEnd));
      else {
        expect(c.page, `${c.fileName} has no pages`).toBe(0);
        expectCitationFromFile(c, sourceOf(c.fileName));
      }
    }
  };

  it("answers extractively with text and citations that resolve to the uploaded files", async () => {
    const chat = await collectChat(quarry.client, { question: EN_QUESTION.q, knowledgeBases: [KB] });
    expect(chat.final.extractive).toBe(true);
    expect(chat.final.droppedMarkers).toBe(0);
    expect(chat.text).toContain(COMPANY_FACT.word);
    expect(chat.citations.length).toBeGreaterThan(0);
    const markers = chat.citations.map((c) => c.marker);
    expect(new Set(markers).size, "a marker cited twice").toBe(markers.length);
    for (const m of markers) expect(chat.text).toContain(`[${m}]`);
    // Every [n] in the text has its citation.
    for (const [, n] of chat.text.matchAll(/\[(\d+)\]/g)) expect(markers).toContain(Number(n));
    expect(chat.citations.some((c) => c.fileName === EN_QUESTION.file && snippetBody(c.snippet).length > 0)).toBe(true);
    expectCitationsResolve(chat.citations);
    expect(chat.final.retrieval!.chunksInContext).toBeGreaterThanOrEqual(chat.citations.length);
  });

  it("cites the PDF on the page that holds the answer", async () => {
    const chat = await collectChat(quarry.client, { question: PDF_QUESTION.q, knowledgeBases: [KB] });
    expect(chat.final.extractive).toBe(true);
    const pdf = chat.citations.filter((c) => c.fileName === PDF_QUESTION.file);
    expect(pdf.length, chat.text).toBeGreaterThan(0);
    const answering = pdf.find((c) => c.page <= PDF_QUESTION.page && PDF_QUESTION.page <= c.pageEnd);
    expect(answering, `pages cited: ${pdf.map((c) => `${c.page}-${c.pageEnd}`).join(", ")}`).toBeDefined();
    expect(flat(pdfPages[PDF_QUESTION.page - 1])).toContain(PDF_QUESTION.phrase);
    expect(chat.text).toContain("Winstanley");
    expectCitationsResolve(chat.citations);
  });

  it("answers a Chinese question from the Chinese rules, citing them", async () => {
    const chat = await collectChat(quarry.client, { question: ZH_QUESTION.q, knowledgeBases: [KB], settings: { mode: RetrievalMode.HYBRID } });
    expect(chat.text).toContain("十五日内");
    expect(chat.citations.some((c) => c.fileName === ZH_QUESTION.file)).toBe(true);
    expectCitationsResolve(chat.citations);
  });

  it("treats an identical re-upload as unchanged and queues nothing", async () => {
    const before = await quarry.client.getDocument({ documentId: ids.get("company.md")! });
    const res = await upload(quarry.client, KB, "company.md", corpusBytes("company.md"));
    expect(res.unchanged).toBe(true);
    expect(res.document!.id).toBe(ids.get("company.md"));
    expect(res.document!.version).toBe(before.document!.version);
    const streamed = await uploadStreamed(quarry.clientFor("grpc"), KB, STREAMED[0], corpusBytes(STREAMED[0]));
    expect(streamed.unchanged).toBe(true);
    // Nothing to watch: the document is still the same ready version.
    const log = await watchAll(quarry.client, [ids.get("company.md")!], 10_000);
    expect(log.get(ids.get("company.md")!)!.map((u) => u.status)).toEqual([DocumentStatus.READY]);
    const after = await quarry.client.getDocument({ documentId: ids.get("company.md")! });
    expect(after.document!.version).toBe(before.document!.version);
    expect(after.document!.chunkCount).toBe(before.document!.chunkCount);
  });

  it("replaces a document's chunks when changed content arrives under the same name", async () => {
    // Version 1 is the company article; version 2 the clockmaker story, under the same name.
    const name = "notes.md";
    const v1 = await upload(quarry.client, KB, name, corpusBytes("company.md"));
    await watchAll(quarry.client, [v1.document!.id]);
    const company = await search("Cambridgeshire", RetrievalMode.BM25, 20);
    expect(company.hits.some((h) => h.fileName === name)).toBe(true);

    const v2 = await upload(quarry.client, KB, name, corpusBytes("prose.txt"));
    expect(v2.unchanged).toBe(false);
    expect(v2.document!.id, "a new version should keep the document's id").toBe(v1.document!.id);
    expect(v2.document!.version).toBeGreaterThan(v1.document!.version);
    const log = await watchAll(quarry.client, [v2.document!.id]);
    expectOrderedProgressToReady(log.get(v2.document!.id)!, name);

    const stale = await search("Cambridgeshire", RetrievalMode.BM25, 20);
    expect(stale.hits.filter((h) => h.fileName === name), "the old version's chunks are still searchable").toEqual([]);
    expect(stale.hits.some((h) => h.fileName === "company.md"), "the other document was hurt").toBe(true);
    const fresh = await search("Ottilie Brandauer", RetrievalMode.BM25, 20);
    expect(fresh.hits.some((h) => h.fileName === name)).toBe(true);
    const { documents } = await quarry.client.listDocuments({ knowledgeBase: KB });
    expect(documents.filter((d) => d.fileName === name)).toHaveLength(1);
    await quarry.client.deleteDocument({ documentId: v2.document!.id });
  });

  it("hides a disabled document's chunks from search and answers, and brings them back when enabled", async () => {
    const id = ids.get("customers.csv")!;
    const found = async () => (await search(CSV_QUESTION.q, RetrievalMode.BM25, 20)).hits.filter((h) => h.chunk!.documentId === id).length;
    expect(await found()).toBeGreaterThan(0);

    const disabled = await quarry.client.setDocumentEnabled({ documentId: id, enabled: false });
    expect(disabled.document!.enabled).toBe(false);
    expect(await found()).toBe(0);
    const vector = await search(CSV_QUESTION.q, RetrievalMode.VECTOR, 50);
    expect(vector.hits.filter((h) => h.chunk!.documentId === id)).toEqual([]);
    const chat = await collectChat(quarry.client, { question: CSV_QUESTION.q, knowledgeBases: [KB] });
    expect(chat.citations.filter((c) => c.documentId === id)).toEqual([]);

    const enabled = await quarry.client.setDocumentEnabled({ documentId: id, enabled: true });
    expect(enabled.document!.enabled).toBe(true);
    expect(await found()).toBeGreaterThan(0);
  });

  it("deletes a document: gone from search, from the list and from the counts", async () => {
    const id = ids.get("filing.html")!;
    const before = (await quarry.client.getKnowledgeBase({ knowledgeBase: KB })).knowledgeBase!;
    const doc = (await quarry.client.getDocument({ documentId: id })).document!;
    await quarry.client.deleteDocument({ documentId: id });

    for (const mode of [RetrievalMode.BM25, RetrievalMode.VECTOR, RetrievalMode.HYBRID]) {
      const { hits } = await search(HTML_QUESTION.q, mode, 50);
      expect(hits.filter((h) => h.chunk!.documentId === id), RetrievalMode[mode]).toEqual([]);
    }
    const { documents } = await quarry.client.listDocuments({ knowledgeBase: KB });
    expect(documents.map((d) => d.id)).not.toContain(id);
    const after = (await quarry.client.getKnowledgeBase({ knowledgeBase: KB })).knowledgeBase!;
    expect(Number(after.documentCount)).toBe(Number(before.documentCount) - 1);
    expect(Number(after.chunkCount)).toBe(Number(before.chunkCount) - doc.chunkCount);
    const gone = await quarry.client.getDocument({ documentId: id }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(ConnectError);
    expect((gone as ConnectError).code).toBe(Code.NotFound);
    ids.delete("filing.html");
  });

  describe("with a chat model (the OpenAI stub), restarted on the same data", () => {
    let stub: OpenAiStub;
    let llm: EmbeddedQuarryFixture;

    beforeAll(async () => {
      // Cites two real context chunks and one that does not exist.
      stub = await startOpenAiStub({
        reply: () => "Tallis Instruments is headquartered in Ely, Cambridgeshire [1]. It was founded in 1894 [2]. It also makes bicycles [99].",
      });
      await quarry.stop({ keepData: true });
      llm = await startEmbeddedQuarry({
        dataDir: quarry.dataDir,
        env: { OPENAI_BASE_URL: stub.url, QUARRY_CHAT_MODEL: "stub-chat", OPENAI_API_KEY: "test-key" },
      });
      quarry = llm;
    });
    afterAll(async () => {
      await stub?.close();
    });

    it("keeps the knowledge base across the restart", async () => {
      const { documents } = await llm.client.listDocuments({ knowledgeBase: KB });
      expect(documents.map((d) => d.id).sort()).toEqual([...ids.values()].sort());
    });

    it("streams the model's answer, maps [1] and [2] to citations and drops the invented [99]", async () => {
      const chat = await collectChat(llm.client, { question: EN_QUESTION.q, knowledgeBases: [KB] });
      expect(chat.final.extractive).toBe(false);
      expect(chat.final.model).toBe("stub-chat");
      expect(chat.final.droppedMarkers).toBe(1);
      expect(chat.citations.map((c) => c.marker).sort()).toEqual([1, 2]);
      expect(chat.text).toContain("Ely, Cambridgeshire [1]");
      expect(chat.text).toContain("[2]");
      expect(chat.text).not.toContain("99");
      expectCitationsResolve(chat.citations);

      const calls = stub.requests.filter((r) => r.path === "/v1/chat/completions");
      expect(calls).toHaveLength(1);
      const body = calls[0].body;
      expect(body.model).toBe("stub-chat");
      expect(body.stream).toBe(true);
      const prompt = (body.messages as { role: string; content: string }[]).find((m) => m.role === "user")!.content;
      expect(prompt).toContain(EN_QUESTION.q);
      // The numbered context: each cited chunk's text under its own [n] header, which names its file.
      for (const c of chat.citations) {
        const at = prompt.indexOf(`[${c.marker}] (`);
        expect(at, `no context entry [${c.marker}] in the prompt`).toBeGreaterThanOrEqual(0);
        const next = prompt.indexOf(`\n[${c.marker + 1}] (`, at);
        const entry = prompt.slice(at, next > 0 ? next : prompt.indexOf("\n\nQuestion:", at));
        expect(entry).toContain(c.fileName);
        expect(flat(entry)).toContain(snippetBody(c.snippet).slice(0, 80));
      }
      expect(flat(prompt)).toContain(EN_QUESTION.phrase);
      expect(prompt).not.toContain("[99] (");
    });

    it("deletes the knowledge base with its documents", async () => {
      await llm.clientFor("grpc").deleteKnowledgeBase({ knowledgeBase: KB });
      const { knowledgeBases } = await llm.client.listKnowledgeBases({});
      expect(knowledgeBases.map((kb) => kb.name)).not.toContain(KB);
      for (const id of ids.values()) {
        const gone = await llm.client.getDocument({ documentId: id }).catch((e: unknown) => e);
        expect((gone as ConnectError).code, `document ${id} outlived its knowledge base`).toBe(Code.NotFound);
      }
      const search = await llm.client.search({ query: "Tallis", knowledgeBases: [KB] }).catch((e: unknown) => e);
      expect((search as ConnectError).code).toBe(Code.NotFound);
      // The name is free again.
      const again = await llm.client.createKnowledgeBase({ name: KB });
      expect(Number(again.knowledgeBase!.documentCount)).toBe(0);
      const { hits } = await llm.client.search({ query: "Tallis Ely", knowledgeBases: [KB], settings: { mode: RetrievalMode.HYBRID } });
      expect(hits, "chunks of the deleted knowledge base came back under its name").toEqual([]);
    });
  });
});
