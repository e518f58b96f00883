import type { Env } from "../../lib/config.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Peers } from "../../lib/rpc/peers.ts";
import type { AssembledService, SharedDeps } from "../../lib/service-runtime.ts";
import { knowledgeBaseLookup } from "../index/knowledge-base-lookup.ts";
import { CoalescingEmbedder } from "./coalescing-embedder.ts";
import { embedderConfig } from "./config.ts";
import type { Embedder } from "./embedder.ts";
import { ThreadedEmbedder } from "./threaded-embedder.ts";
import { OpenAiEmbedder } from "./openai-embedder.ts";
import { build } from "./server.ts";
import { startEmbedderWorker } from "./worker.ts";

export async function createEmbedder(env: Env): Promise<Embedder> {
  const config = embedderConfig(env);
  if (config.provider === "local") return ThreadedEmbedder.load(config.modelDir, { batchSize: config.batchSize });
  return new OpenAiEmbedder(config);
}

export async function assembleEmbedder(env: Env, peers: Peers, shared: SharedDeps): Promise<AssembledService> {
  const logger = shared.logger.child({ service: "embedder" });
  const embedder = await createEmbedder(env);
  const knowledgeBase = knowledgeBaseLookup(() => peers.transport("index"));
  return {
    name: "embedder",
    // Questions asked at the same moment share one forward pass instead of queueing for one each.
    server: build({ embedder: new CoalescingEmbedder(embedder, 64), logger }),
    startWorkers: async () => [await startEmbedderWorker({ bus: shared.bus, embedder, knowledgeBase, logger, redrive: shared.redrive })],
    close: () => embedder.close(),
  };
}
