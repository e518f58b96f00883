import { createClient } from "@connectrpc/connect";
import { EmbedderService } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import type { Env } from "../../lib/config.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Peers } from "../../lib/rpc/peers.ts";
import type { AssembledService, SharedDeps } from "../../lib/service-runtime.ts";
import { knowledgeBaseLookup } from "../index/knowledge-base-lookup.ts";
import { chunkerConfig } from "./config.ts";
import { build } from "./server.ts";
import { WordPieceTokenCounter } from "./wordpiece-token-counter.ts";
import { startChunkerWorker } from "./worker.ts";

export async function assembleChunker(env: Env, peers: Peers, shared: SharedDeps): Promise<AssembledService> {
  const config = chunkerConfig(env);
  const logger = shared.logger.child({ service: "chunker" });
  const counter = WordPieceTokenCounter.fromModelDir(config.tokenizerDir);
  // The chunk size limit is the embedder's, so ask it once at start-up.
  const { maxInputTokens } = await createClient(EmbedderService, peers.transport("embedder")).getModelInfo({});
  const knowledgeBase = knowledgeBaseLookup(() => peers.transport("index"));
  return {
    name: "chunker",
    server: build({ counter, maxInputTokens, maxChunks: config.maxDocumentChunks, logger }),
    startWorkers: async () => [
      await startChunkerWorker({
        bus: shared.bus,
        counter,
        maxInputTokens,
        maxChunks: config.maxDocumentChunks,
        settingsFor: async (id) => (await knowledgeBase(id)).chunking,
        logger,
        redrive: shared.redrive,
      }),
    ],
    close: async () => {},
  };
}
