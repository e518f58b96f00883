// DebugRetrieval end to end on the embedded server, through the gateway, on SQLite, OpenSearch and
// Elasticsearch: a chunk planted so that it exists but ranks below top-k for a question; a turn that
// asks it; the report on that turn (exists, its rank in each list — checked against plain searches
// of each list —, dropped by top-k, not in the context), a text that no chunk holds, a hit that
// reached the context, a candidate the reranker demoted (a local server speaking TEI's /rerank),
// each query variant's search under multi-query (the OpenAI-compatible stub writes the variants), an
// assistant's turn, a Chinese text matched only after normalising, a chunk below every list's window
// and past the deep window, a disabled document; and `quarry debug` as a person runs it.
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { ExpectationMatch, RankSource, RetrievalLoss } from "../../gen/quarry/answer/v1/retrieval_debug_pb.ts";
import { RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import type { Env } from "../../lib/config.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { ordinal } from "../../services/answer/index.ts";
import { elasticsearchTestSpace } from "../../services/index/testing/elasticsearch-test-support.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { startRerankStub, type RerankStub } from "../../lib/testing/rerank-stub.ts";
import { QueryRewriteMode } from "../../gen/quarry/common/v1/assistant_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { engineAddress } from "../support/engines.ts";
import { failure, upload, watchAll } from "./e2e-helpers.ts";

const QUESTION = "Where is the spare key for the lighthouse door kept?";
// Each says the question's words more often than the planted chunk: they outrank it in both lists.
const DISTRACTORS = [
  "The lighthouse door key is not kept in the lighthouse door lock overnight.",
  "A spare key for the lighthouse door was ordered but the lighthouse door key never came.",
  "Lighthouse door: the key for the lighthouse door is kept by the keeper, not spare.",
  "Where the lighthouse door key is kept is written in the lighthouse door log.",
  "The lighthouse key ring holds the door key and the spare key for the lamp room.",
];
const PLANTED = "The spare one hangs behind the tide table in the boathouse.";
const CHINESE = "备用钥匙挂在船库的潮汐表后面。";
const KB = "debug";

const BIN = resolve(process.cwd(), "bin/quarry.mjs");

function quarryCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, QUARRY_API_KEY: "" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

function describeRetrievalDebug(backend: string, backendEnv: () => Env, cleanup: () => Promise<void> = async () => {}, withCli = false) {
  describe(`DebugRetrieval on the embedded server (${backend})`, () => {
    let quarry: EmbeddedQuarryFixture;
    let embeddings: OpenAiStub;
    let chat: OpenAiStub;
    let rerank: RerankStub;
    /** What the chat stub answers (an answer, or a test's query variants), and how the rerank stub scores the planted chunk. */
    let chatReply = () => "It is kept by the keeper [1].";
    let plantedRerankScore = 0.01;
    let turnId = "";
    let plantedDocument = "";

    beforeAll(async () => {
      embeddings = await startOpenAiStub({ embeddingDimension: 64 });
      chat = await startOpenAiStub({ reply: () => chatReply() });
      rerank = await startRerankStub({ protocol: "tei", score: (_q, text) => (text.includes("tide table") ? plantedRerankScore : 0.5) });
      quarry = await startEmbeddedQuarry({
        env: {
          ...backendEnv(),
          OPENAI_BASE_URL: chat.url,
          QUARRY_CHAT_MODEL: "stub-chat",
          OPENAI_API_KEY: "test-key",
          QUARRY_RERANK_URL: rerank.url,
          QUARRY_RERANK_PROTOCOL: "tei",
          QUARRY_EMBEDDING_PROVIDER: "openai",
          QUARRY_EMBEDDING_BASE_URL: embeddings.url,
          QUARRY_EMBEDDING_MODEL: "stub-embedding",
          QUARRY_EMBEDDING_DIMENSION: "64",
        },
      });
      await quarry.client.createKnowledgeBase({ name: KB, chunking: { chunkSize: 24, chunkOverlap: 0 } });
      const docs = await Promise.all([
        ...DISTRACTORS.map((text, i) => upload(quarry.client, KB, `note-${i}.txt`, new TextEncoder().encode(text))),
        upload(quarry.client, KB, "boathouse.txt", new TextEncoder().encode(PLANTED)),
        upload(quarry.client, KB, "boathouse-zh.txt", new TextEncoder().encode(CHINESE)),
      ]);
      plantedDocument = docs[DISTRACTORS.length].document!.id;
      await watchAll(quarry.client, docs.map((d) => d.document!.id));
      for await (const { event } of quarry.client.chat({ question: QUESTION, knowledgeBases: [KB], settings: { topK: 3 } })) {
        if (event?.event.case === "started") turnId = event.event.value.turnId;
      }
      expect(turnId).toMatch(/^tn_/);
    }, 180_000);
    afterAll(async () => {
      await quarry?.stop();
      await embeddings?.close();
      await chat?.close();
      await rerank?.close();
      await cleanup();
    });

    /** The planted chunk's 1-based rank in a plain search of one list (0: not in the first 50). */
    async function rankIn(mode: RetrievalMode): Promise<number> {
      const { hits } = await quarry.client.search({ query: QUESTION, knowledgeBases: [KB], settings: { mode, topK: 50 } });
      return hits.findIndex((h) => h.chunk?.text.includes("tide table")) + 1;
    }

    it("finds a planted chunk that exists but ranked below top-k, with its rank in each list, and says top-k dropped it", async () => {
      const { report } = await quarry.client.debugRetrieval({ turnId, expect: { text: "hangs behind the tide table" } });
      const r = report!;
      expect(r.turnId).toBe(turnId);
      expect(r.query).toBe(QUESTION);
      expect(r.settings?.topK).toBe(3);
      expect(r.exists).toBe(true);
      expect(r.matchingChunks).toBe(1);
      expect(r.existenceNote).toMatch(/^7 chunks of 1 knowledge base read; 1 contains the text/);
      const [trace] = r.chunks;
      expect(trace.chunk).toMatchObject({ fileName: "boathouse.txt", documentId: plantedDocument, match: ExpectationMatch.EXACT, enabled: true });
      expect(trace.loss).toBe(RetrievalLoss.TOP_K);
      expect(trace.contextNumber).toBe(0);
      expect(trace.turnContextNumber).toBe(0);
      expect(trace.retrievedRank).toBe(0);
      // Its ranks in the raw lists are the ranks plain searches of each list give it.
      const bm25 = trace.lists.find((l) => l.list === "bm25")!;
      const vector = trace.lists.find((l) => l.list === "vector")!;
      const fused = trace.lists.find((l) => l.list === "fused")!;
      expect(bm25.rank).toBe(await rankIn(RetrievalMode.BM25));
      expect(vector.rank).toBe(await rankIn(RetrievalMode.VECTOR));
      expect(fused.rank).toBe(await rankIn(RetrievalMode.HYBRID));
      expect(bm25.rank).toBeGreaterThan(3);
      expect(fused.rank).toBeGreaterThan(3);
      expect(bm25).toMatchObject({ window: 50, inWindow: true, source: RankSource.DEEP_SEARCH });
      expect(fused).toMatchObject({ window: 3, inWindow: false, source: RankSource.DEEP_SEARCH });
      expect(trace.verdict).toBe(`not retrieved: ranked ${ordinal(fused.rank)} after fusion, top-k is 3`);
      expect(r.verdict).toBe(trace.verdict);
      expect(r.loss).toBe(RetrievalLoss.TOP_K);
      // The rerun's context is the turn's: nothing changed in between.
      expect(r.sameContextAsTurn).toBe(true);
      expect(r.context).toHaveLength(3);
    });

    it("reruns an assistant's turn base by base, with the base's own top-k", async () => {
      const assistant = (await quarry.client.createAssistant({ assistant: { name: "keeper", knowledgeBases: [{ knowledgeBase: KB, topK: 3, priority: 1 }] } })).assistant!;
      let assistantTurn = "";
      for await (const { event } of quarry.client.chat({ question: QUESTION, assistant: "keeper" })) {
        if (event?.event.case === "started") assistantTurn = event.event.value.turnId;
      }
      const { report } = await quarry.client.debugRetrieval({ turnId: assistantTurn, expect: { text: "tide table" } });
      expect(report!.assistantId).toBe(assistant.id);
      const [trace] = report!.chunks;
      expect(trace.loss).toBe(RetrievalLoss.TOP_K);
      const fused = trace.lists.find((l) => l.list === "fused")!;
      expect(fused).toMatchObject({ knowledgeBaseId: assistant.knowledgeBases[0].knowledgeBase, window: 3 });
      expect(fused.rank).toBe(await rankIn(RetrievalMode.HYBRID));
      expect(report!.sameContextAsTurn).toBe(true);
    });

    it("blames rerank for a candidate the reranker demoted, and follows one it promoted into the context", async () => {
      const fusedRank = await rankIn(RetrievalMode.HYBRID);
      plantedRerankScore = 0.01;
      const demoted = (await quarry.client.debugRetrieval({ turnId, settings: { rerank: true }, expect: { text: "tide table" } })).report!;
      expect(demoted.settings?.rerank).toBe(true);
      expect(demoted.notes?.reranker).toContain(rerank.url);
      const [trace] = demoted.chunks;
      expect(trace.loss).toBe(RetrievalLoss.RERANK);
      expect(trace.rerankCandidateRank).toBe(fusedRank);
      expect(trace.verdict).toMatch(new RegExp(`^dropped by rerank: ${ordinal(fusedRank)} of the \\d+ candidates before rerank, not in the 3 the reranker kept$`));
      // The candidates were widened to 3 × top-k for the reranker: the fused list's window says so.
      expect(trace.lists.find((l) => l.list === "fused")?.window).toBe(9);

      plantedRerankScore = 0.99;
      const promoted = (await quarry.client.debugRetrieval({ turnId, settings: { rerank: true }, expect: { text: "tide table" } })).report!.chunks[0];
      expect(promoted).toMatchObject({ loss: RetrievalLoss.NONE, contextNumber: 1, retrievedRank: 1, rerankScore: 0.99, turnContextNumber: 0 });
    });

    it("follows the chunk through each query variant's search under multi-query", async () => {
      chatReply = () => "tide table boathouse\nspare one hangs";
      try {
        const { report } = await quarry.client.debugRetrieval({
          query: QUESTION,
          knowledgeBases: [KB],
          settings: { mode: RetrievalMode.BM25, topK: 3, queryRewrite: QueryRewriteMode.MULTI_QUERY, queryVariants: 2 },
          expect: { text: "tide table" },
        });
        expect(report!.notes?.queries).toEqual([QUESTION, "tide table boathouse", "spare one hangs"]);
        expect(report!.settings).toMatchObject({ queryRewrite: QueryRewriteMode.MULTI_QUERY, queryExpansion: 0 });
        const byQuery = new Map(report!.chunks[0].lists.map((l) => [l.query, l]));
        expect([...byQuery.keys()].sort()).toEqual([QUESTION, "spare one hangs", "tide table boathouse"].sort());
        expect(byQuery.get("tide table boathouse")).toMatchObject({ list: "bm25", rank: 1, source: RankSource.CANDIDATES });
        expect(byQuery.get("spare one hangs")).toMatchObject({ list: "bm25", rank: 1, source: RankSource.CANDIDATES });
        expect(byQuery.get(QUESTION)!.rank).toBe(await rankIn(RetrievalMode.BM25));
        // First in both variants' lists, it fuses first: no other chunk is first in two lists.
        expect(report!.chunks[0]).toMatchObject({ loss: RetrievalLoss.NONE, contextNumber: 1 });
      } finally {
        chatReply = () => "It is kept by the keeper [1].";
      }
    });

    it("says a text no chunk holds is not in the knowledge base", async () => {
      const { report } = await quarry.client.debugRetrieval({ turnId, expect: { text: "kept in the glovebox of the van" } });
      expect(report!.exists).toBe(false);
      expect(report!.chunks).toEqual([]);
      expect(report!.loss).toBe(RetrievalLoss.NOT_IN_KNOWLEDGE_BASE);
      expect(report!.verdict).toBe("not in the knowledge base: no chunk of the 1 knowledge base searched contains the text (7 chunks read)");
    });

    it("gives a hit that reached the context its context number, the turn's too", async () => {
      const turn = (await quarry.client.getTurn({ turnId })).turn!;
      const first = turn.provenance!.context[0];
      const { report } = await quarry.client.debugRetrieval({ turnId, expect: { chunkId: first.chunkId } });
      const [trace] = report!.chunks;
      expect(trace.loss).toBe(RetrievalLoss.NONE);
      expect(trace.contextNumber).toBe(1);
      expect(trace.turnContextNumber).toBe(1);
      expect(trace.chunk?.match).toBe(ExpectationMatch.CHUNK_ID);
      expect(trace.lists.find((l) => l.list === "fused")).toMatchObject({ rank: 1, source: RankSource.CANDIDATES, inWindow: true });
      expect(report!.verdict).toBe("in the context as [1] (rank 1 of the 3 retrieved)");
    });

    it("matches a Chinese text across a line break only after normalising, for an ad-hoc query", async () => {
      const { report } = await quarry.client.debugRetrieval({
        query: "备用钥匙在哪里",
        knowledgeBases: [KB],
        settings: { mode: RetrievalMode.BM25, topK: 3 },
        expect: { text: "船库的\n潮汐表" },
      });
      expect(report!.turnId).toBe("");
      expect(report!.exists).toBe(true);
      expect(report!.chunks[0].chunk).toMatchObject({ fileName: "boathouse-zh.txt", match: ExpectationMatch.NORMALISED });
      expect(report!.chunks[0].loss).toBe(RetrievalLoss.NONE);
    });

    it("refuses a request that expects nothing or names a turn and a query, and an unknown turn", async () => {
      expect((await failure(() => quarry.client.debugRetrieval({ turnId }))).code).toBe(Code.InvalidArgument);
      expect((await failure(() => quarry.client.debugRetrieval({ turnId, query: "x", expect: { text: "x" } }))).code).toBe(Code.InvalidArgument);
      expect((await failure(() => quarry.client.debugRetrieval({ turnId: "tn_00000000000000000000", expect: { text: "x" } }))).code).toBe(Code.NotFound);
    });

    if (withCli) {
      it("quarry debug prints the verdict and the lists for a turn, and the report as JSON", async () => {
        const shown = await quarryCli(["debug", turnId, "--expect", "hangs behind the tide table", "--url", quarry.url]);
        expect(shown.code, shown.stderr).toBe(0);
        expect(shown.stdout).toMatch(/^verdict: not retrieved: ranked \d+(st|nd|rd|th) after fusion, top-k is 3\n/);
        expect(shown.stdout).toContain(`turn ${turnId}: searched for ${JSON.stringify(QUESTION)}`);
        expect(shown.stdout).toMatch(/bm25 {3}kb_\w+: rank \d+ of the 50 fetched/);
        expect(shown.stdout).toContain("not retrieved; not in the context");
        expect(shown.stdout).toContain("the same as the turn's");
        const json = JSON.parse((await quarryCli(["debug", turnId, "--expect", "glovebox", "--json", "--url", quarry.url])).stdout);
        expect(json.exists ?? false).toBe(false);
        expect(json.loss).toBe("RETRIEVAL_LOSS_NOT_IN_KNOWLEDGE_BASE");
      });

      it("quarry debug --kb --query --chunk follows a chunk of a disabled document", async () => {
        const turn = (await quarry.client.getTurn({ turnId })).turn!;
        const plantedHits = await quarry.client.search({ query: "tide table boathouse", knowledgeBases: [KB], settings: { mode: RetrievalMode.BM25, topK: 1 } });
        const chunkId = plantedHits.hits[0].chunk!.id;
        expect(turn.provenance!.context.some((c) => c.chunkId === chunkId)).toBe(false);
        await quarry.client.setDocumentEnabled({ documentId: plantedDocument, enabled: false });
        const shown = await quarryCli(["debug", "--kb", KB, "--query", QUESTION, "--chunk", chunkId, "--url", quarry.url]);
        expect(shown.code, shown.stderr).toBe(0);
        expect(shown.stdout).toContain("verdict: not searchable: its document boathouse.txt is disabled");
        expect(shown.stdout).toContain(", DISABLED");
        const missing = await quarryCli(["debug", "--kb", KB, "--query", QUESTION, "--url", quarry.url]);
        expect(missing.code).toBe(1);
        expect(missing.stderr).toContain("--expect TEXT, --chunk ID or --document ID");
      });
    }

    // Last: on SQLite one FTS5 table holds every base's terms, so a new base changes BM25 scores in
    // the others, and the earlier tests compare reruns with the turn.
    it("gives the rank of a chunk below every list's window, found by a deeper search, and scores it on its own past the deep window", async () => {
      // 60 notes that each say the question's words: the planted chunk falls below the 50 candidates each list fuses.
      const crowd = Array.from({ length: 60 }, (_, i) => `Note ${i + 1}: the spare key for the lighthouse door is kept where note ${i + 1} says.`).join("\n\n");
      await quarry.client.createKnowledgeBase({ name: "debug-deep", chunking: { chunkSize: 24, chunkOverlap: 0 } });
      const docs = await Promise.all([upload(quarry.client, "debug-deep", "crowd.txt", new TextEncoder().encode(crowd)), upload(quarry.client, "debug-deep", "boathouse.txt", new TextEncoder().encode(PLANTED))]);
      await watchAll(quarry.client, docs.map((d) => d.document!.id));
      const rankDeep = async (mode: RetrievalMode) =>
        (await quarry.client.search({ query: QUESTION, knowledgeBases: ["debug-deep"], settings: { mode, topK: 200 } })).hits.findIndex((h) => h.chunk?.text.includes("tide table")) + 1;
      const expected = { bm25: await rankDeep(RetrievalMode.BM25), vector: await rankDeep(RetrievalMode.VECTOR) };
      expect(expected.bm25).toBeGreaterThan(50);
      expect(expected.vector).toBeGreaterThan(50);

      const ask = { query: QUESTION, knowledgeBases: ["debug-deep"], settings: { topK: 3 }, expect: { text: "tide table" } };
      const { report } = await quarry.client.debugRetrieval(ask);
      const [trace] = report!.chunks;
      expect(trace.loss).toBe(RetrievalLoss.NOT_RETRIEVED);
      const bm25 = trace.lists.find((l) => l.list === "bm25")!;
      const vector = trace.lists.find((l) => l.list === "vector")!;
      expect(bm25).toMatchObject({ rank: expected.bm25, window: 50, inWindow: false, source: RankSource.DEEP_SEARCH });
      expect(vector).toMatchObject({ rank: expected.vector, window: 50, inWindow: false, source: RankSource.DEEP_SEARCH });
      expect(trace.lists.find((l) => l.list === "fused")).toMatchObject({ rank: 0, source: RankSource.ABSENT });
      expect(trace.verdict).toBe(`not retrieved: rank ${expected.bm25} in bm25, below the 50 fetched; rank ${expected.vector} in vector, below the 50 fetched`);

      // With the deep search shallower than its ranks, each list scores it on its own, beside the 50th candidate's score.
      const shallow = (await quarry.client.debugRetrieval({ ...ask, deepWindow: 50 })).report!.chunks[0];
      for (const list of ["bm25", "vector"]) {
        const p = shallow.lists.find((l) => l.list === list)!;
        expect(p).toMatchObject({ rank: 0, source: RankSource.DIRECT_SCORE });
        expect(p.score).toBeLessThanOrEqual(p.windowLastScore!);
      }
      expect(shallow.verdict).toMatch(/^not retrieved: beyond rank 50 in bm25 \(its score [\d.e-]+; the 50th fetched scores [\d.e-]+\); beyond rank 50 in vector/);
    });
  });
}

describeRetrievalDebug("SQLite", () => ({}), async () => {}, true);

const opensearch = engineAddress("OPENSEARCH_URL");
if (opensearch) {
  const prefix = `quarry-debug-${randomBytes(4).toString("hex")}`;
  describeRetrievalDebug("OpenSearch", () => ({ OPENSEARCH_URL: opensearch, QUARRY_OPENSEARCH_PREFIX: prefix }), () => deleteOpenSearchNamespace(opensearch, `${prefix}-`));
} else {
  describe.skip("DebugRetrieval on OpenSearch (skipped: OPENSEARCH_URL not set)", () => {});
}
const elasticsearch = engineAddress("ELASTICSEARCH_URL");
if (elasticsearch) {
  const space = elasticsearchTestSpace(elasticsearch);
  describeRetrievalDebug("Elasticsearch", () => ({ ELASTICSEARCH_URL: elasticsearch, QUARRY_ELASTICSEARCH_PREFIX: space.prefix.replace(/-$/, "") }), () => space.cleanup());
} else {
  describe.skip("DebugRetrieval on Elasticsearch (skipped: ELASTICSEARCH_URL not set)", () => {});
}
