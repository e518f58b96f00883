import { createClient } from "@connectrpc/connect";
import { EmbedderService } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import type { Env } from "../../lib/config.ts";
import { UnavailableError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Peers } from "../../lib/rpc/peers.ts";
import type { AssembledService, SharedDeps } from "../../lib/service-runtime.ts";
import { knowledgeBaseLookup } from "../index/knowledge-base-lookup.ts";
import { chunkerConfig } from "./config.ts";
import { build } from "./server.ts";
import { WordPieceTokenCounter } from "./wordpiece-token-counter.ts";
import { startChunkerWorker } from "./worker.ts";

export function assembleChunker(env: Env, peers: Peers, shared: SharedDeps): AssembledService {
  const config = chunkerConfig(env);
  const logger = shared.logger.child({ service: "chunker" });
  const counter = WordPieceTokenCounter.fromModelDir(config.tokenizerDir);
  // The chunk size limit is the embedder's, so it is asked once at start-up (prepare); until then the
  // chunker's own RPCs answer unavailable rather than guess.
  let learned: number | undefined;
  const deps = {
    counter,
    logger,
    get maxInputTokens(): number {
      if (learned === undefined) throw new UnavailableError("the chunker has not yet learned the embedder's input limit; is the embedder up?");
      return learned;
    },
  };
  const knowledgeBase = knowledgeBaseLookup(() => peers.transport("index"));
  return {
    name: "chunker",
    server: build(deps),
    prepare: async (retry) => {
      const embedder = createClient(EmbedderService, peers.transport("embedder"));
      learned = (await retry("the embedder's model limit", () => embedder.getModelInfo({}))).maxInputTokens;
    },
    startWorkers: async () => [
      await startChunkerWorker({
        bus: shared.bus,
        counter,
        maxInputTokens: deps.maxInputTokens,
        settingsFor: async (id) => (await knowledgeBase(id)).chunking,
        logger,
        redrive: shared.redrive,
      }),
    ],
    close: async () => {},
  };
}
