// One named service in its own process (the distributed mode): peers over gRPC at
// QUARRY_<NAME>_URL (by default their standard ports on this machine), the bus on Kafka when
// KAFKA_BROKERS is set. It listens at once and waits for its peers, so start order does not matter.
import { assembleAnswer } from "../services/answer/index.ts";
import { assembleChunker } from "../services/chunker/index.ts";
import { assembleEmbedder } from "../services/embedder/index.ts";
import { assembleIndex } from "../services/index/index.ts";
import { assembleParser } from "../services/parser/index.ts";
import { assembleGateway, type AssembledGateway } from "../gateway/main.ts";
import { openBlobStore } from "../lib/blobs/blob-store-from-config.ts";
import { DirBlobStore } from "../lib/blobs/dir-blob-store.ts";
import { openEventBus } from "../lib/bus/bus-from-config.ts";
import { redriveSettings } from "../lib/pipeline/redrive.ts";
import { PIPELINE_CONSUMERS, pipelineBacklog } from "../lib/pipeline/stage-backlog.ts";
import { RecentActivity } from "../lib/metrics/recent-activity.ts";
import { reportStageActivity } from "../lib/pipeline/stage-activity-reports.ts";
import { publicRequests } from "../gateway/status/public-requests.ts";
import { processMetrics } from "../lib/metrics/prometheus-metrics.ts";
import { blobDir, optional, servicePort, type Env, type ServiceName } from "../lib/config.ts";
import type { Logger } from "../lib/logger.ts";
import { internalToken, requireInternalToken } from "../lib/rpc/internal-token.ts";
import { isLoopback } from "../lib/rpc/loopback.ts";
import { retryWhileUnavailable, waitForPeers } from "../lib/rpc/peer-readiness.ts";
import { remotePeers, type PeerName } from "../lib/rpc/peers.ts";
import { startTracing } from "../lib/tracing/sdk.ts";
import { runService, shutdownGraceMs, type AssembledService, type RunningService } from "../lib/service-runtime.ts";

/** Whom each service calls. */
export const PEERS: Record<ServiceName, PeerName[]> = {
  parser: ["index"],
  chunker: ["embedder", "index"],
  embedder: ["index"],
  index: [],
  answer: ["index", "embedder"],
  gateway: ["index", "chunker", "parser", "embedder", "answer"],
};

/**
 * Whom a service calls only for an occasional request, without waiting for it at start-up: the
 * index calls the embedder when a knowledge base changes its model, and the embedder waits for the
 * index, so waiting both ways would never start.
 */
/** The services that read or write blobs (originals, large uploads, large stage outputs). */
const BLOB_USERS = new Set<ServiceName>(["gateway", "parser", "chunker", "embedder", "index"]);

export const LATER_PEERS: Partial<Record<ServiceName, PeerName[]>> = {
  index: ["embedder"],
};

export async function startService(name: ServiceName, env: Env, logger: Logger): Promise<RunningService> {
  const peers = remotePeers(env, [...PEERS[name], ...(LATER_PEERS[name] ?? [])]);
  const port = servicePort(env, name);
  const tracing = startTracing(env, `quarry-${name}`);
  if (tracing) logger.info({ url: tracing.url }, "tracing: spans go to this OTLP endpoint");
  const bus = await openEventBus(env, logger);
  // The gateway keeps originals and large uploads; every stage passes its large outputs through the
  // same store (lib/pipeline/stage-payloads.ts). Anything else gets the folder store, which it never
  // uses, so it does not load the S3 SDK.
  const blobs = BLOB_USERS.has(name) ? await openBlobStore(env) : new DirBlobStore(blobDir(env));
  const registry = processMetrics(env);
  // Each service reports the backlog of the groups it consumes as (the gateway consumes none).
  const consumed = PIPELINE_CONSUMERS.filter((c) => c.stage === name || c.stage.startsWith(`${name}.`));
  if (consumed.length > 0) registry.watchBacklog(() => pipelineBacklog(bus, consumed));
  // The gateway keeps its last hour of public requests for the status view; a stage process its
  // stages' last hour, which it reports on the bus for the gateways to sum (stage-activity-reports.ts).
  const activity =
    name === "gateway"
      ? new RecentActivity(registry, { requestsOf: publicRequests })
      : consumed.length > 0
        ? new RecentActivity(registry, { requestsOf: () => false })
        : undefined;
  const metrics = activity ?? registry;
  const shared = { bus, blobs, logger, redrive: redriveSettings(env), metrics, activity };
  const service = await {
    parser: async () => assembleParser(env, peers, shared),
    chunker: async () => assembleChunker(env, peers, shared),
    embedder: () => assembleEmbedder(env, peers, shared),
    index: () => assembleIndex(env, shared, peers),
    answer: async () => assembleAnswer(env, peers, shared),
    gateway: async () => assembleGateway(env, peers, shared),
  }[name]();
  if (name === "gateway") await (service as AssembledGateway).checkExposure();
  const host = optional(env, "QUARRY_HOST") ?? "127.0.0.1";
  const guarded = name === "gateway" ? service : guardInternal(service, env, host, logger);
  const running = await runService(
    guarded,
    port,
    host,
    logger,
    {
      waitForPeers: (signal) => waitForPeers(peers, PEERS[name], { logger, signal }),
      retry: (what, attempt, signal) => retryWhileUnavailable(what, attempt, { logger, signal }),
    },
    shutdownGraceMs(env),
  );
  const reporting = name !== "gateway" && activity ? await reportStageActivity(bus, activity, name, logger) : undefined;
  const stop = async (graceMs?: number) => {
    await running.stop(graceMs);
    await reporting?.stop();
    // The consumers were drained (or released) by stop(); nothing is left to wait for.
    await bus.close({ graceMs: 0 });
    await tracing?.stop();
  };
  // Start-up that fails for a reason waiting cannot cure (a bad answer from a peer, the bus) ends
  // the process, as it did before the service listened early.
  running.ready.catch((err) => {
    logger.error({ err }, "start-up failed");
    void stop().finally(() => process.exit(1));
  });
  return { ...running, stop };
}

/** An internal service's listener takes only calls carrying QUARRY_INTERNAL_TOKEN, when one is set. */
function guardInternal(service: AssembledService, env: Env, host: string, logger: Logger): AssembledService {
  const token = internalToken(env);
  if (!token) {
    if (!isLoopback(host)) logger.warn({ service: service.name, host }, "no QUARRY_INTERNAL_TOKEN: anyone who can reach this address can call this internal service");
    return service;
  }
  const server = service.server;
  return {
    ...service,
    server: { ...server, listen: (port, listenHost) => server.listen(port, listenHost, { interceptors: [requireInternalToken(token)], metricsToken: token }) },
  };
}
