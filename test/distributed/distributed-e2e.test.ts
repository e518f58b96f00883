// The embedded end-to-end scenario, run against Quarry in distributed mode: six service processes
// on OpenSearch, Kafka and Tika, reached only through the gateway over real HTTP. Real documents in
// many formats are uploaded (over gRPC and over Connect), watched until ready, found by every
// retrieval mode, and cited by the extractive answerer with the right PDF page. The documents are
// the repository's fixtures (test/fixtures), so the suite needs nothing beside the clone. Then faults,
// produced for real: Tika and OpenSearch go away behind TCP proxies that only this run's parser and
// index service use, so other suites on the machine keep their engines. All of it shares one set
// of processes (one file, run in order): two sets at once on today's fixed topic names would
// consume each other's events. The broker restart is in distributed-kafka-restart.test.ts.
import { afterAll, beforeAll, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { Kafka, logLevel } from "kafkajs";
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { DocumentStatus, RetrievalMode, type SearchHit } from "../../gen/quarry/common/v1/common_pb.ts";
import { fixtureBytes, type FixtureName } from "../fixtures/fixture-documents.ts";
import { COMPANY_FACT, COMPANY_MARKDOWN, CHINESE_NOTES_MARKDOWN, DOCX_CONTENT, PDF_PAGES } from "../fixtures/fixture-texts.ts";
import {
  collectChat,
  expectOrderedProgressToReady,
  flat,
  pdfPageTexts,
  snippetBody,
  upload,
  uploadStreamed,
  watchAll,
} from "../e2e/e2e-helpers.ts";
import { SERVICE_NAMES, startDistributedQuarry, type DistributedQuarry } from "../support/distributed-quarry.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";
import { describeWithAllEngines } from "./engines-all.ts";
import { waitFor } from "./wait-for.ts";

const BUF = resolve(process.cwd(), "node_modules/.bin/buf");

/** The gRPC service each process serves besides health and reflection. */
const SERVED: Record<(typeof SERVICE_NAMES)[number], string> = {
  index: "quarry.index.v1.IndexService",
  embedder: "quarry.embedder.v1.EmbedderService",
  parser: "quarry.parser.v1.ParserService",
  chunker: "quarry.chunker.v1.ChunkerService",
  answer: "quarry.answer.v1.AnswerService",
  gateway: "quarry.gateway.v1.QuarryService",
};

/** One file per format; the binary ones go through Tika, the Chinese Markdown through jieba on both sides. */
const FILES: FixtureName[] = [
  "canal-boating.docx",
  "allotment.odt",
  "ferries.xlsx",
  "lighthouses.pdf",
  "filing.html",
  "company.md",
  "notes-zh.md",
  "harbour-verses.epub",
];

/** Each phrase is in the fixture's text (test/fixtures/fixture-texts.ts). */
const FINDS: { query: string; mode: RetrievalMode; file: string; phrase: string }[] = [
  { query: "Eddystone rocks lighthouse Henry Winstanley", mode: RetrievalMode.BM25, file: "lighthouses.pdf", phrase: "built by Henry Winstanley in 1698" },
  { query: "Northwind Ferries commission file number", mode: RetrievalMode.BM25, file: "filing.html", phrase: "000-48213" },
  { query: "蜂王衰老或者失踪", mode: RetrievalMode.BM25, file: "notes-zh.md", phrase: "发现蜂王衰老或者失踪时" },
  { query: "how do I get a narrowboat through a canal lock", mode: RetrievalMode.VECTOR, file: "canal-boating.docx", phrase: DOCX_CONTENT.steps[0] },
  { query: "which company makes laboratory balances and where is it based", mode: RetrievalMode.VECTOR, file: "company.md", phrase: COMPANY_FACT.phrase },
  { query: "quarterly ridership over eight quarters", mode: RetrievalMode.HYBRID, file: "ferries.xlsx", phrase: "Quarterly ridership" },
  { query: "chit seed potatoes on a windowsill", mode: RetrievalMode.HYBRID, file: "allotment.odt", phrase: "Chit seed potatoes on a windowsill" },
  { query: "The Lamp on the Point lantern keeper", mode: RetrievalMode.HYBRID, file: "harbour-verses.epub", phrase: "and all night long the keeper burns" },
];

/** The Markdown fixtures' text, to check that a hit is text of its file. */
const MARKDOWN: Record<string, string> = { "company.md": COMPANY_MARKDOWN, "notes-zh.md": CHINESE_NOTES_MARKDOWN };

describeWithAllEngines("Quarry distributed: six processes end to end", (engines) => {
  let quarry: DistributedQuarry;
  let tika: TcpProxy;
  let opensearch: TcpProxy;
  let kb: string;
  const ids = new Map<string, string>();

  beforeAll(async () => {
    const started = Date.now();
    const tikaUrl = new URL(engines.tikaUrl);
    const osUrl = new URL(engines.opensearchUrl);
    tika = await startTcpProxy({ host: tikaUrl.hostname, port: Number(tikaUrl.port) });
    opensearch = await startTcpProxy({ host: osUrl.hostname, port: Number(osUrl.port) });
    quarry = await startDistributedQuarry({
      ...engines,
      serviceEnv: {
        parser: { TIKA_URL: `http://${tika.address}` },
        index: { OPENSEARCH_URL: `http://${opensearch.address}` },
      },
    });
    console.info(`distributed Quarry (run ${quarry.runId}) up in ${Date.now() - started} ms at ${quarry.url}`);
  });

  afterAll(async () => {
    await quarry?.stop();
    await tika?.close();
    await opensearch?.close();
  });

  it.each(SERVICE_NAMES)("the %s process answers buf curl: grpc.health.v1 Check SERVING and its methods through reflection", async (name) => {
    const { url } = quarry.services[name];
    const buf = (...args: string[]) => promisify(execFile)(BUF, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { timeout: 30_000 });
    const check = await buf("--data", "{}", `${url}/grpc.health.v1.Health/Check`);
    expect(JSON.parse(check.stdout)).toEqual({ status: "SERVING" });
    const listed = await buf("--list-methods", url);
    const methods = listed.stdout.trim().split("\n");
    expect(methods).toContain("grpc.health.v1.Health/Check");
    expect(methods.filter((m) => m.startsWith(`${SERVED[name]}/`)).length, `${name} lists no ${SERVED[name]} methods: ${methods.join(", ")}`).toBeGreaterThan(0);
  });

  it("ingests real documents in eight formats, uploaded over gRPC and Connect, until every one is ready", async () => {
    const grpc = quarry.clientFor("grpc");
    const created = await grpc.createKnowledgeBase({ name: `dist-e2e-${quarry.runId}` });
    kb = created.knowledgeBase!.id;
    expect(created.knowledgeBase!.embeddingDimension).toBe(384);

    const started = Date.now();
    for (const [i, file] of FILES.entries()) {
      const bytes = await fixtureBytes(file);
      // Three ways in: unary gRPC, unary Connect, and the client-streaming upload over gRPC.
      const res =
        i % 3 === 0 ? await upload(grpc, kb, file, bytes) : i % 3 === 1 ? await upload(quarry.client, kb, file, bytes) : await uploadStreamed(grpc, kb, file, bytes);
      expect(res.document!.fileName).toBe(file);
      ids.set(file, res.document!.id);
    }
    const log = await watchAll(quarry.client, [...ids.values()], 240_000);
    const notReady = [...ids].map(([file, id]) => ({ file, last: log.get(id)!.at(-1) })).filter(({ last }) => last?.status !== DocumentStatus.READY);
    expect(notReady.map(({ file, last }) => `${file}: ${last ? DocumentStatus[last.status] : "no update"} ${last?.error ?? ""}`)).toEqual([]);
    for (const [file, id] of ids) {
      expectOrderedProgressToReady(log.get(id)!, file);
      expect(log.get(id)!.at(-1)!.chunkCount, `${file} has no chunks`).toBeGreaterThan(0);
    }
    console.info(`${FILES.length} documents ingested in ${Date.now() - started} ms`);

    const listed = await quarry.client.listDocuments({ knowledgeBase: kb });
    expect(listed.documents.map((d) => [d.fileName, d.status]).sort()).toEqual(FILES.map((f) => [f, DocumentStatus.READY]).sort());
  }, 300_000);

  it.each(FINDS.map((f) => ({ ...f, modeName: RetrievalMode[f.mode] })))("finds $phrase in $file by $modeName search", async ({ query, mode, file, phrase }) => {
    expect(kb, "the ingestion test did not run").toBeDefined();
    const { hits } = await quarry.client.search({ query, knowledgeBases: [kb], settings: { mode, topK: 5 } });
    expect(hits.length).toBeGreaterThan(0);
    const top3 = hits.slice(0, 3);
    const hit = top3.find((h) => h.fileName === file && flat(h.chunk!.text).includes(flat(phrase)));
    expect(hit, `no top-3 hit from ${file} containing "${phrase}"; got ${describeHits(top3)}`).toBeDefined();
    expect(hit!.chunk!.documentId).toBe(ids.get(file));
    // Each hit explains its ranks in the lists that produced it.
    const explain = hit!.explain!;
    if (mode === RetrievalMode.BM25) expect(explain.bm25Rank).toBeGreaterThan(0);
    if (mode === RetrievalMode.VECTOR) expect(explain.vectorRank).toBeGreaterThan(0);
    if (mode === RetrievalMode.HYBRID) expect(explain.bm25Rank + explain.vectorRank).toBeGreaterThan(0);
    if (file.endsWith(".md")) expect(flat(MARKDOWN[file])).toContain(flat(hit!.chunk!.text).slice(0, 40));
  });

  it("answers extractively with citations from the uploaded files, on the right PDF page", async () => {
    expect(kb, "the ingestion test did not run").toBeDefined();
    const pages = await pdfPageTexts(await fixtureBytes("lighthouses.pdf"));
    // The heading sits on page 3 only (checked with unpdf, independently of Quarry's parser).
    const onPage = pages.map((text, i) => (flat(text).includes(PDF_PAGES[2].heading) ? i + 1 : 0)).filter(Boolean);
    expect(onPage).toEqual([3]);

    const chat = await collectChat(quarry.client, {
      question: "What did the lighthouse keepers record in their logbook every night?",
      knowledgeBases: [kb],
    });
    expect(chat.citations.length).toBeGreaterThan(0);
    expect(chat.final.extractive).toBe(true);
    expect(chat.text.trim()).not.toBe("");
    for (const citation of chat.citations) {
      expect(ids.get(citation.fileName), `citation of a file never uploaded: ${citation.fileName}`).toBe(citation.documentId);
      expect(chat.text).toContain(`[${citation.marker}]`);
    }
    const fromPdf = chat.citations.filter((c) => c.fileName === "lighthouses.pdf");
    expect(fromPdf.length, `no citation from lighthouses.pdf: ${chat.citations.map((c) => c.fileName).join(", ")}`).toBeGreaterThan(0);
    for (const citation of fromPdf) {
      const cited = pages.slice(citation.page - 1, Math.max(citation.page, citation.pageEnd)).join(" ");
      const words = snippetBody(citation.snippet).match(/[\p{L}\p{N}]{3,}/gu) ?? [];
      expect(words.length).toBeGreaterThan(0);
      expect(words.filter((w) => !cited.includes(w)), `snippet words not on pages ${citation.page}-${citation.pageEnd}`).toEqual([]);
    }
    const logbook = fromPdf.find((c) => /logbook/i.test(c.snippet));
    expect(logbook, `no PDF citation quotes the logbook: ${fromPdf.map((c) => c.snippet).join(" | ")}`).toBeDefined();
    expect(logbook!.page).toBeLessThanOrEqual(3);
    expect(Math.max(logbook!.page, logbook!.pageEnd)).toBeGreaterThanOrEqual(3);
  });

  const newKnowledgeBase = async (label: string) =>
    (await quarry.client.createKnowledgeBase({ name: `dist-fault-${label}-${quarry.runId}` })).knowledgeBase!.id;

  const statusOf = async (id: string) => (await quarry.client.getDocument({ documentId: id })).document!;


  it("Tika down: a .docx fails naming Tika, a Markdown file is unaffected, and the .docx ends ready once Tika is back", async () => {
    const kb = await newKnowledgeBase("tika");
    const dlqBefore = await deadLetterCount(engines.kafkaBrokers, quarry, "documents.submitted");
    await tika.cut();
    const cutAt = Date.now();
    const docx = (await upload(quarry.client, kb, "canal-boating.docx", await fixtureBytes("canal-boating.docx"))).document!;
    const md = (await upload(quarry.client, kb, "company.md", await fixtureBytes("company.md"))).document!;

    const log = await watchAll(quarry.client, [docx.id, md.id], 120_000);
    const failed = log.get(docx.id)!.at(-1)!;
    expect(failed.status, `the .docx ended ${DocumentStatus[failed.status]}`).toBe(DocumentStatus.FAILED);
    expect(failed.error).toMatch(/parser: .*Tika .*unreachable/i);
    expect(log.get(md.id)!.at(-1)!.status, log.get(md.id)!.at(-1)!.error).toBe(DocumentStatus.READY);

    // The bus's own retries (about 3 s of backoff) run out while Tika is still gone, so the event
    // is dead-lettered: what brings the document back after this is the redrive, not a lucky retry.
    await waitFor("the .docx event in the dead-letter topic", async () =>
      (await deadLetterCount(engines.kafkaBrokers, quarry, "documents.submitted")) > dlqBefore ? true : undefined, 60_000);
    await tika.restore();
    console.info(`Tika was unreachable for ${Date.now() - cutAt} ms`);

    const restoredAt = Date.now();
    // The redriven document is indexed: its text is searchable again...
    const hit = await waitFor(
      "the .docx to be searchable",
      async () => {
        const { hits } = await quarry.client.search({ query: "lower gates top paddles", knowledgeBases: [kb], settings: { mode: RetrievalMode.BM25 } });
        return hits.find((h) => h.chunk!.documentId === docx.id);
      },
      90_000,
    );
    expect(flat(hit.chunk!.text)).toMatch(/close the lower gates/i);
    // ...and its status says so.
    const ready = await waitFor("the .docx to be READY", async () => {
      const d = await statusOf(docx.id);
      return d.status === DocumentStatus.READY ? d : undefined;
    }, 30_000).catch(async (error) => {
      const d = await statusOf(docx.id);
      throw new Error(`${(error as Error).message}; it is ${DocumentStatus[d.status]}: ${d.errorMessage}`);
    });
    expect(ready.chunkCount).toBeGreaterThan(0);
    expect(ready.errorMessage).toBe("");
    console.info(`.docx ready ${Date.now() - restoredAt} ms after Tika came back`);
  }, 240_000);

  it("OpenSearch down: Search and Chat answer UNAVAILABLE, never an empty list, and work again once it is back", async () => {
    const kb = await newKnowledgeBase("opensearch");
    const md = (await upload(quarry.client, kb, "company.md", await fixtureBytes("company.md"))).document!;
    const log = await watchAll(quarry.client, [md.id], 120_000);
    expect(log.get(md.id)!.at(-1)!.status).toBe(DocumentStatus.READY);
    const query = "Tallis Instruments headquartered in Ely";
    const search = (mode: RetrievalMode) => quarry.client.search({ query, knowledgeBases: [kb], settings: { mode } });
    expect((await search(RetrievalMode.HYBRID)).hits.length).toBeGreaterThan(0);

    await opensearch.cut();
    try {
      for (const mode of [RetrievalMode.BM25, RetrievalMode.VECTOR, RetrievalMode.HYBRID]) {
        const outcome = await search(mode).then(
          (res) => `answered with ${res.hits.length} hits`,
          (error) => error,
        );
        expect(outcome, `${RetrievalMode[mode]} search with OpenSearch down`).toBeInstanceOf(ConnectError);
        expect((outcome as ConnectError).code, `${RetrievalMode[mode]}: ${(outcome as ConnectError).message}`).toBe(Code.Unavailable);
      }
      const chat = await (async () => {
        for await (const _ of quarry.client.chat({ question: COMPANY_FACT.question, knowledgeBases: [kb] })) {
          // The stream must fail before it yields an answer made without retrieval.
          if (_.event?.event.case === "citation" || _.event?.event.case === "text") return "answered";
        }
        return "ended without an error";
      })().catch((error) => error);
      expect(chat).toBeInstanceOf(ConnectError);
      expect((chat as ConnectError).code).toBe(Code.Unavailable);
    } finally {
      await opensearch.restore();
    }
    const back = await waitFor("search to work again", async () => {
      const res = await search(RetrievalMode.HYBRID).catch(() => undefined);
      return res && res.hits.length > 0 ? res : undefined;
    }, 30_000);
    expect(back.hits[0].fileName).toBe("company.md");
  }, 180_000);
});

function describeHits(hits: SearchHit[]): string {
  return hits.map((h) => `${h.fileName}: ${flat(h.chunk!.text).slice(0, 80)}`).join(" | ");
}

/** Messages in `<topic>.dlq` so far (the run's prefixed topic when the bus honours the prefix). */
async function deadLetterCount(brokers: string, quarry: DistributedQuarry, topic: string): Promise<number> {
  const kafka = new Kafka({ brokers: brokers.split(","), clientId: "quarry-e2e-dlq-probe", logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const prefixed = `${quarry.topicPrefix}${topic}.dlq`;
    const name = existing.has(prefixed) ? prefixed : `${topic}.dlq`;
    if (!existing.has(name)) return 0;
    const offsets = await admin.fetchTopicOffsets(name);
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}
