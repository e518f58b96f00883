// bench chat: how long a person waits for the first citation and the first answer token, against
// retrieval alone (the Search RPC with the same question and settings), with the extractive
// answerer and with a local OpenAI-compatible model (the test stub, a real SSE server on loopback,
// so the model itself costs ~nothing and what remains is Quarry's path). Per question the two are
// measured back to back, alternating which goes first, on the same warm Quarry.
import type { ChatResponse } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import { RetrievalMode } from "../gen/quarry/common/v1/common_pb.ts";
import { startOpenAiStub } from "../lib/testing/openai-stub.ts";
import { startBenchBackend, type BackendName } from "./bench-backend.ts";
import { describeMachine, loadAverageNow, type MachineInfo } from "./machine.ts";
import { summarize, type LatencySummary } from "./percentiles.ts";
import { generateSyntheticChunks, loadBenchQueries, loadIntoEngine, loadSentencePools } from "./synthetic-corpus.ts";

export type Answerer = "extractive" | "openai-stub";

export interface ChatBenchOptions {
  backend: BackendName;
  opensearchUrl?: string;
  chunks: number;
  requests: number;
  seed: number;
  evalDir: string;
  progress?(line: string): void;
}

export interface ChatBenchRow {
  answerer: Answerer;
  retrieval: LatencySummary;
  firstCitation: LatencySummary;
  firstToken: LatencySummary;
  complete: LatencySummary;
  /** p50 first citation − p50 retrieval, ms: the goal is ≤ 20. */
  firstCitationOverRetrievalMs: number;
  firstTokenOverRetrievalMs: number;
}

export interface ChatBenchReport {
  bench: "chat";
  backend: BackendName;
  machine: MachineInfo;
  loadAverageEnd: [number, number, number];
  settings: { chunks: number; requests: number; seed: number; mode: "hybrid"; topK: number };
  stubReply: string;
  rows: ChatBenchRow[];
}

// The model's reply cites at once, as a grounded answer would; the stub streams it 3 characters a delta.
const STUB_REPLY = "The first passage answers this directly [1], and the second one adds context [2].";
const TOP_K = 8;

export async function runChatBench(options: ChatBenchOptions): Promise<ChatBenchReport> {
  const machine = describeMachine();
  const rows: ChatBenchRow[] = [];
  const stub = await startOpenAiStub({ reply: () => STUB_REPLY });
  try {
    for (const answerer of ["extractive", "openai-stub"] as Answerer[]) {
      rows.push(await benchAnswerer(answerer, options, stub.url));
    }
  } finally {
    await stub.close();
  }
  return {
    bench: "chat",
    backend: options.backend,
    machine,
    loadAverageEnd: loadAverageNow(),
    settings: { chunks: options.chunks, requests: options.requests, seed: options.seed, mode: "hybrid", topK: TOP_K },
    stubReply: STUB_REPLY,
    rows,
  };
}

async function benchAnswerer(answerer: Answerer, options: ChatBenchOptions, stubUrl: string): Promise<ChatBenchRow> {
  const log = options.progress ?? (() => {});
  const env = answerer === "openai-stub" ? { OPENAI_BASE_URL: stubUrl, QUARRY_CHAT_MODEL: "stub-chat", OPENAI_API_KEY: "bench" } : {};
  const backend = await startBenchBackend({ backend: options.backend, opensearchUrl: options.opensearchUrl, env });
  try {
    const { knowledgeBase } = await backend.client.createKnowledgeBase({ name: "bench-chat" });
    const kb = knowledgeBase!;
    await loadIntoEngine(
      backend.engine,
      generateSyntheticChunks(loadSentencePools(options.evalDir), { chunks: options.chunks, seed: options.seed, dimension: kb.embeddingDimension }),
      { knowledgeBaseId: kb.id, chunksPerDocument: backend.name === "opensearch" ? 1000 : 100 },
    );
    const questions = loadBenchQueries(options.evalDir, options.requests, options.seed + 1);
    const settings = { mode: RetrievalMode.HYBRID, topK: TOP_K };
    const retrieval = async (question: string) => {
      const started = performance.now();
      await backend.client.search({ query: question, knowledgeBases: [kb.id], settings });
      return performance.now() - started;
    };
    const chat = async (question: string) => {
      const started = performance.now();
      let firstCitation = Number.NaN;
      let firstToken = Number.NaN;
      for await (const res of backend.client.chat({ question, knowledgeBases: [kb.id], settings })) {
        const event = (res as ChatResponse).event?.event;
        if (event?.case === "citation" && Number.isNaN(firstCitation)) firstCitation = performance.now() - started;
        if (event?.case === "text" && event.value.text && Number.isNaN(firstToken)) firstToken = performance.now() - started;
      }
      return { firstCitation, firstToken, complete: performance.now() - started };
    };
    for (let i = 0; i < Math.min(5, questions.length); i++) {
      await retrieval(questions[i].text);
      await chat(questions[i].text);
    }
    const samples = { retrieval: [] as number[], firstCitation: [] as number[], firstToken: [] as number[], complete: [] as number[] };
    let answersWithoutCitation = 0;
    for (let i = 0; i < questions.length; i++) {
      const question = questions[i].text;
      const runChat = async () => {
        const c = await chat(question);
        if (Number.isNaN(c.firstCitation)) answersWithoutCitation++;
        else samples.firstCitation.push(c.firstCitation);
        if (!Number.isNaN(c.firstToken)) samples.firstToken.push(c.firstToken);
        samples.complete.push(c.complete);
      };
      if (i % 2 === 0) {
        samples.retrieval.push(await retrieval(question));
        await runChat();
      } else {
        await runChat();
        samples.retrieval.push(await retrieval(question));
      }
    }
    if (samples.firstCitation.length === 0) throw new Error(`no ${answerer} answer cited anything; the bench cannot measure time to first citation`);
    const row: ChatBenchRow = {
      answerer,
      retrieval: summarize(samples.retrieval),
      firstCitation: summarize(samples.firstCitation),
      firstToken: summarize(samples.firstToken),
      complete: summarize(samples.complete),
      firstCitationOverRetrievalMs: 0,
      firstTokenOverRetrievalMs: 0,
    };
    row.firstCitationOverRetrievalMs = round2(row.firstCitation.p50 - row.retrieval.p50);
    row.firstTokenOverRetrievalMs = round2(row.firstToken.p50 - row.retrieval.p50);
    log(
      `[chat ${backend.name} ${answerer}] retrieval p50 ${row.retrieval.p50.toFixed(1)} ms, first citation ${row.firstCitation.p50.toFixed(1)} ms, first token ${row.firstToken.p50.toFixed(1)} ms` +
        (answersWithoutCitation ? ` (${answersWithoutCitation} answers cited nothing)` : ""),
    );
    return row;
  } finally {
    await backend.close();
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
