import { createClient } from "@connectrpc/connect";
import { EmbedderService } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import { modelsDir, type Env } from "../../lib/config.ts";
import { UnavailableError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Peers } from "../../lib/rpc/peers.ts";
import type { AssembledService, SharedDeps } from "../../lib/service-runtime.ts";
import { knowledgeBaseLookup } from "../../lib/rpc/knowledge-base-lookup.ts";
import { documentVersionLookup } from "../../lib/rpc/document-version-lookup.ts";
import { chunkerConfig } from "./config.ts";
import { build } from "./server.ts";
import { modelTokens } from "./model-tokens.ts";
import { WordPieceTokenCounter } from "../../lib/tokens/wordpiece-token-counter.ts";
import { startChunkerWorker } from "./worker.ts";
import { ChunkingThreads } from "./chunking-threads.ts";
import { StagePayloads, stageInlineMaxBytes } from "../../lib/pipeline/stage-payloads.ts";

export function assembleChunker(env: Env, peers: Peers, shared: SharedDeps): AssembledService {
  const config = chunkerConfig(env);
  const logger = shared.logger.child({ service: "chunker" });
  // Loaded once here only to fail at start-up, with the fix, when the tokenizer is not installed.
  WordPieceTokenCounter.fromModelDir(config.tokenizerDir);
  const threads = new ChunkingThreads(config.threads);
  // The chunk size limit is the embedder's, so it is asked once at start-up (prepare), and once per
  // other model a knowledge base names; until then the chunker's own RPCs answer unavailable rather than guess.
  const embedder = createClient(EmbedderService, peers.transport("embedder"));
  let learned: number | undefined;
  const defaultLimit = (): number => {
    if (learned === undefined) throw new UnavailableError("the chunker has not yet learned the embedder's input limit; is the embedder up?");
    return learned;
  };
  const tokensFor = modelTokens({
    modelsDir: modelsDir(env),
    fallbackDir: config.tokenizerDir,
    maxInputTokens: async (model) => (model ? (await embedder.getModelInfo({ model })).maxInputTokens : defaultLimit()),
  });
  const deps = {
    tokenizerDir: config.tokenizerDir,
    threads,
    tokensFor,
    maxChunks: config.maxDocumentChunks,
    logger,
    metrics: shared.metrics,
    get maxInputTokens(): number {
      return defaultLimit();
    },
  };
  const knowledgeBase = knowledgeBaseLookup(() => peers.transport("index"));
  const currentVersion = documentVersionLookup(() => peers.transport("index"));
  return {
    name: "chunker",
    server: build(deps),
    prepare: async (retry) => {
      learned = (await retry("the embedder's model limit", () => embedder.getModelInfo({}))).maxInputTokens;
    },
    startWorkers: async () => [
      await startChunkerWorker({
        bus: shared.bus,
        tokensFor,
        knowledgeBase,
        currentVersion,
        maxChunks: config.maxDocumentChunks,
        logger,
        threads,
        payloads: new StagePayloads(shared.blobs, stageInlineMaxBytes(env)),
        redrive: shared.redrive,
        metrics: shared.metrics,
      }),
    ],
    close: () => threads.close(),
  };
}
