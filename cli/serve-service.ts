// One named service in its own process (the distributed mode): peers over gRPC at
// QUARRY_<NAME>_URL, the bus on Kafka when KAFKA_BROKERS is set.
import { assembleAnswer } from "../services/answer/main.ts";
import { assembleChunker } from "../services/chunker/main.ts";
import { assembleEmbedder } from "../services/embedder/main.ts";
import { assembleIndex } from "../services/index/main.ts";
import { assembleParser } from "../services/parser/main.ts";
import { assembleGateway, type AssembledGateway } from "../gateway/main.ts";
import { openEventBus } from "../lib/bus/bus-from-config.ts";
import { redriveSettings } from "../lib/pipeline/redrive.ts";
import { integer, optional, ServicePorts, type Env, type ServiceName } from "../lib/config.ts";
import type { Logger } from "../lib/logger.ts";
import { internalToken, requireInternalToken } from "../lib/rpc/internal-token.ts";
import { isLoopback } from "../lib/rpc/loopback.ts";
import { remotePeers, type PeerName } from "../lib/rpc/peers.ts";
import { runService, type AssembledService, type RunningService } from "../lib/service-runtime.ts";

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
  if (name === "gateway") await (service as AssembledGateway).checkExposure();
  const portVariable = name === "gateway" ? "QUARRY_PORT" : `QUARRY_${name.toUpperCase()}_PORT`;
  const host = optional(env, "QUARRY_HOST") ?? "127.0.0.1";
  const running = await runService(name === "gateway" ? service : guardInternal(service, env, host, logger), integer(env, portVariable, ServicePorts[name]), host, logger);
  return {
    ...running,
    stop: async () => {
      await running.stop();
      await bus.close();
    },
  };
}

/** An internal service's listener takes only calls carrying QUARRY_INTERNAL_TOKEN, when one is set. */
function guardInternal(service: AssembledService, env: Env, host: string, logger: Logger): AssembledService {
  const token = internalToken(env);
  if (!token) {
    if (!isLoopback(host)) logger.warn({ service: service.name, host }, "no QUARRY_INTERNAL_TOKEN: anyone who can reach this address can call this internal service");
    return service;
  }
  const server = service.server;
  return { ...service, server: { ...server, listen: (port, listenHost) => server.listen(port, listenHost, { interceptors: [requireInternalToken(token)] }) } };
}
