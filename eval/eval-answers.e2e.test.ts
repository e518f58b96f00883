// The eval-answers command against a real embedded Quarry (upload, pipeline with the local model,
// Chat through the gateway) on the hand-written fixture in eval/fixtures/answers-mini, with two
// answerers: the extractive one, and a chat model served by the OpenAI-compatible stub that cites
// one supported and one unsupported sentence in every answer.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../lib/logger.ts";
import { startOpenAiStub, type OpenAiStub, type StubChatMessage } from "../lib/testing/openai-stub.ts";
import { runEvalAnswers } from "./eval-answers-command.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "answers-mini");
const SCORED_QUERIES = 6;

/** The first sentence of context passage [1], quoted and cited, then a claim passage [2] does not make. */
function reply(messages: StubChatMessage[]): string {
  const user = messages.find((m) => m.role === "user")!.content;
  const entry = user.split(/\n\n(?=\[\d+\] \()/).find((e) => e.startsWith("Context:\n\n[1] (") || e.startsWith("[1] ("))!;
  const passage = entry.split("\n").slice(1).filter((line) => line.trim() && !line.startsWith("#")).join(" ");
  const first = /^.*?[.。](?=\s|$|\p{Script=Han})/u.exec(passage)?.[0] ?? passage;
  return `${first} [1] Penguins there are purple and sing opera [2].`;
}

function collect(stream: PassThrough): () => string {
  const parts: string[] = [];
  stream.on("data", (chunk: Buffer) => parts.push(chunk.toString("utf8")));
  return () => parts.join("");
}

describe("quarry eval-answers end to end (embedded)", () => {
  let stub: OpenAiStub;
  let lines: Record<string, unknown>[];
  let readErr: () => string;
  let details: Record<string, unknown>[];
  let detailsDir: string;

  beforeAll(async () => {
    stub = await startOpenAiStub({ reply });
    const out = new PassThrough();
    const read = collect(out);
    const err = new PassThrough();
    readErr = collect(err);
    const env: Record<string, string | undefined> = { ...process.env, OPENAI_BASE_URL: stub.url, QUARRY_CHAT_MODEL: "stub-chat", OPENAI_API_KEY: "test" };
    delete env.OPENSEARCH_URL;
    detailsDir = await mkdtemp(join(tmpdir(), "quarry-eval-answers-details-"));
    const detailsFile = join(detailsDir, "details.jsonl");
    await runEvalAnswers({ dataset: FIXTURE, json: true, concurrency: 3, details: detailsFile }, { out, err, env, logger: silentLogger });
    lines = read().trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    details = (await readFile(detailsFile, "utf8")).trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  });
  afterAll(async () => {
    await stub?.close();
    if (detailsDir) await rm(detailsDir, { recursive: true, force: true });
  });

  it("prints one JSON object per answerer with the answer metrics", () => {
    expect(lines.map((l) => l.answerer), readErr()).toEqual(["extractive", "stub-chat"]);
    for (const line of lines) {
      expect(line).toMatchObject({ dataset: "answers-mini", queries: SCORED_QUERIES, refused: 0 });
      for (const key of ["answer_hit_rate", "answer_f1", "median_answer_chars", "citation_hit_rate", "unsupported_citation_rate", "p50_first_token_ms", "p50_total_ms"]) {
        expect(line[key], key).toBeTypeOf("number");
        expect(line[key] as number, key).toBeGreaterThanOrEqual(0);
      }
      expect(line.p50_total_ms as number).toBeGreaterThanOrEqual(line.p50_first_token_ms as number);
    }
    // Every question went to the model once, plus the untimed warm-up.
    expect(stub.requests.filter((r) => r.path === "/v1/chat/completions")).toHaveLength(SCORED_QUERIES + 1);
  });

  it("scores the extractive answers: each holds its gold answer, cites its passage, and quotes it faithfully", () => {
    const extractive = lines[0];
    expect(extractive.answer_hit_rate).toBe(1);
    expect(extractive.citation_hit_rate).toBe(1);
    expect(extractive.unsupported_citation_rate).toBe(0);
    expect(extractive.answer_f1 as number).toBeGreaterThan(0);
    expect(extractive.answer_f1 as number).toBeLessThan(1); // whole sentences, longer than the gold spans
  });

  it("reads each turn back: no extractive failure, and each question's context, holding its gold answer, in the details", () => {
    expect(lines[0].failures).toEqual({ not_retrieved: 0, not_in_context: 0, abstained: 0, not_chosen: 0, cut: 0, wrong_citation: 0 });
    expect(Object.keys(lines[1].failures as object).sort()).toEqual(["abstained", "cut", "not_chosen", "not_in_context", "not_retrieved", "wrong_citation"]);
    expect(details).toHaveLength(2 * SCORED_QUERIES);
    for (const line of details.slice(0, SCORED_QUERIES)) {
      expect(line, line.question as string).toMatchObject({ run: "answerable", hit: true, failure: null });
      expect(line.turn_id).toBeTypeOf("string");
      const context = line.context as { text: string; documentId: string }[];
      expect(context.length).toBeGreaterThan(0);
      expect((line.cited as string[]).some((cited) => context.some((c) => c.text.includes(cited.trim().slice(0, 20))))).toBe(true);
    }
  });

  it("finds the chat model's unsupported citation in every answer", () => {
    const chat = lines[1];
    // One supported quote of passage [1] and one invented claim citing [2], in each of six answers.
    expect(chat.unsupported_citation_rate).toBe(0.5);
    expect(chat.citation_hit_rate).toBe(1);
  });
});
