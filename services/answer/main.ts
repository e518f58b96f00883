import { createClient } from "@connectrpc/connect";
import { EmbedderService } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import type { Env } from "../../lib/config.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import type { Peers } from "../../lib/rpc/peers.ts";
import type { AssembledService } from "../../lib/service-runtime.ts";
import { WordPieceTokenCounter } from "../../lib/tokens/wordpiece-token-counter.ts";
import { answerConfig } from "./config.ts";
import { LocalChatModel } from "./chat-models/local-chat-model.ts";
import { localChatConfig } from "./chat-models/local-chat-config.ts";
import { OpenAiChatModel } from "./chat-models/openai-chat-model.ts";
import { HttpReranker } from "./retrieval/rerank/http-reranker.ts";
import { LlmReranker } from "./retrieval/rerank/llm-reranker.ts";
import { build } from "./server.ts";

export function assembleAnswer(env: Env, peers: Peers, shared: { logger: Logger; metrics?: Metrics }): AssembledService {
  const config = answerConfig(env);
  const logger = shared.logger.child({ service: "answer" });
  const counter = WordPieceTokenCounter.fromModelDir(config.tokenizerDir);
  const local = localChatConfig(env);
  const localModel = local ? new LocalChatModel(local) : undefined;
  const chatModel = localModel ?? (config.llm ? new OpenAiChatModel(config.llm) : undefined);
  // An HTTP reranker when one is configured, else the chat model pointwise, else none (rerank is refused).
  const reranker = config.rerank ? new HttpReranker(config.rerank) : chatModel ? new LlmReranker(chatModel) : undefined;
  return {
    name: "answer",
    server: build({
      index: createClient(IndexService, peers.transport("index")),
      embedder: createClient(EmbedderService, peers.transport("embedder")),
      chatModel,
      reranker,
      countTokens: (text) => counter.count(text),
      contextTokenBudget: config.contextTokenBudget,
      maxQuestionChars: config.maxQuestionChars,
      historyRounds: config.historyRounds,
      onTurnNotSaved: (err) => logger.warn({ err }, "a turn was answered but could not be stored"),
      logger,
      metrics: shared.metrics,
    }),
    startWorkers: async () => [],
    close: async () => {
      await localModel?.close();
    },
  };
}
