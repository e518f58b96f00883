import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { dataDir, type Env } from "../../lib/config.ts";
import { documentVersionLookup } from "../../lib/rpc/document-version-lookup.ts";
import { SqliteEmbeddingCheckpoints } from "./embedding-checkpoints.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Peers } from "../../lib/rpc/peers.ts";
import type { AssembledService, SharedDeps } from "../../lib/service-runtime.ts";
import { knowledgeBaseLookup } from "../../lib/rpc/knowledge-base-lookup.ts";
import { embedderConfig } from "./config.ts";
import { coalescingPool, FixedModelPool, LocalModelPool, type EmbedderPool } from "./embedder-pool.ts";
import { ThreadedEmbedder } from "./threaded-embedder.ts";
import { measuredPool } from "./measured-embedder.ts";
import { noMetrics } from "../../lib/metrics/metrics.ts";
import { OpenAiEmbedder } from "./openai-embedder.ts";
import { build } from "./server.ts";
import { startEmbedderWorker } from "./worker.ts";
import { PayloadThreads } from "./payload-threads.ts";
import { StagePayloads, stageInlineMaxBytes } from "../../lib/pipeline/stage-payloads.ts";

export async function createEmbedderPool(env: Env): Promise<EmbedderPool> {
  const config = embedderConfig(env);
  if (config.provider === "openai") {
    // One client per model: the endpoint is the same, the model name and vector length differ.
    return new FixedModelPool([config, ...config.moreModels.map((m) => ({ ...config, ...m }))].map((options) => new OpenAiEmbedder(options)));
  }
  const pool = new LocalModelPool(config.modelsDir, config.defaultModel, (dir) => ThreadedEmbedder.load(dir, { batchSize: config.batchSize }));
  // The default model is loaded at start-up, so a missing install fails the start, not the first upload.
  await pool.get();
  return pool;
}

export async function assembleEmbedder(env: Env, peers: Peers, shared: SharedDeps): Promise<AssembledService> {
  const logger = shared.logger.child({ service: "embedder" });
  const metrics = shared.metrics ?? noMetrics;
  const models = measuredPool(await createEmbedderPool(env), metrics);
  const knowledgeBase = knowledgeBaseLookup(() => peers.transport("index"));
  const currentVersion = documentVersionLookup(() => peers.transport("index"));
  // Per process: replicas on separate machines each resume the documents they held.
  mkdirSync(dataDir(env), { recursive: true });
  const checkpoints = new SqliteEmbeddingCheckpoints(join(dataDir(env), "embedder-checkpoints.sqlite"));
  const payloads = new StagePayloads(shared.blobs, stageInlineMaxBytes(env));
  const payloadThreads = new PayloadThreads();
  return {
    name: "embedder",
    // Questions asked at the same moment share one forward pass instead of queueing for one each.
    server: build({ models: coalescingPool(models, 64, (model, seconds) => metrics.embedQueueWait(model, seconds)), logger, metrics: shared.metrics }),
    startWorkers: async () => [
      await startEmbedderWorker({ bus: shared.bus, models, knowledgeBase, currentVersion, checkpoints, payloads, payloadThreads, logger, redrive: shared.redrive, metrics: shared.metrics }),
    ],
    close: async () => {
      await Promise.all([models.close(), payloadThreads.close()]);
      checkpoints.close();
    },
  };
}
