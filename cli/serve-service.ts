// One named service in its own process (the distributed mode): peers over gRPC at
// QUARRY_<NAME>_URL, the bus on Kafka when KAFKA_BROKERS is set.
import { assembleAnswer } from "../services/answer/main.ts";
import { assembleChunker } from "../services/chunker/main.ts";
import { assembleEmbedder } from "../services/embedder/main.ts";
import { assembleIndex } from "../services/index/main.ts";
import { assembleParser } from "../services/parser/main.ts";
import { assembleGateway } from "../gateway/main.ts";
import { openEventBus } from "../lib/bus/bus-from-config.ts";
import { redriveSettings } from "../lib/pipeline/redrive.ts";
import { integer, optional, ServicePorts, type Env, type ServiceName } from "../lib/config.ts";
import type { Logger } from "../lib/logger.ts";
import { remotePeers, type PeerName } from "../lib/rpc/peers.ts";
import { runService, shutdownGraceMs, type RunningService } from "../lib/service-runtime.ts";

/** Whom each service calls. */
const PEERS: Record<ServiceName, PeerName[]> = {
  parser: [],
  chunker: ["embedder", "index"],
  embedder: ["index"],
  index: [],
  answer: ["index", "embedder"],
  gateway: ["index", "chunker", "parser", "embedder", "answer"],
};

export async function startService(name: ServiceName, env: Env, logger: Logger): Promise<RunningService> {
  const peers = remotePeers(env, PEERS[name]);
  const bus = await openEventBus(env, logger);
  const shared = { bus, logger, redrive: redriveSettings(env) };
  const service = await {
    parser: async () => assembleParser(env, shared),
    chunker: () => assembleChunker(env, peers, shared),
    embedder: () => assembleEmbedder(env, peers, shared),
    index: () => assembleIndex(env, shared),
    answer: async () => assembleAnswer(env, peers, shared),
    gateway: async () => assembleGateway(env, peers, shared),
  }[name]();
  const portVariable = name === "gateway" ? "QUARRY_PORT" : `QUARRY_${name.toUpperCase()}_PORT`;
  const running = await runService(service, integer(env, portVariable, ServicePorts[name]), optional(env, "QUARRY_HOST") ?? "127.0.0.1", logger, shutdownGraceMs(env));
  return {
    ...running,
    stop: async (graceMs?: number) => {
      await running.stop(graceMs);
      // The consumers were drained (or released) by stop(); nothing is left to wait for.
      await bus.close({ graceMs: 0 });
    },
  };
}
