// Quarry in one process: every service assembled here, talking through in-memory transports, one
// SQLite file for catalog, search and the event log, and only the gateway listening.
import { assembleAnswer } from "../services/answer/index.ts";
import { assembleChunker } from "../services/chunker/index.ts";
import { assembleEmbedder } from "../services/embedder/index.ts";
import { assembleIndex } from "../services/index/index.ts";
import { assembleParser } from "../services/parser/index.ts";
import { assembleGateway, type AssembledGateway } from "../gateway/main.ts";
import { gatewayConfig } from "../gateway/config.ts";
import { openBlobStore } from "../lib/blobs/blob-store-from-config.ts";
import { openEventBus } from "../lib/bus/bus-from-config.ts";
import { redriveSettings } from "../lib/pipeline/redrive.ts";
import { pipelineBacklog } from "../lib/pipeline/stage-backlog.ts";
import { processMetrics } from "../lib/metrics/prometheus-metrics.ts";
import { RecentActivity } from "../lib/metrics/recent-activity.ts";
import { publicRequests } from "../gateway/status/public-requests.ts";
import type { Subscription } from "../lib/bus/event-bus.ts";
import { dataDir, type Env } from "../lib/config.ts";
import type { Logger } from "../lib/logger.ts";
import { InProcessPeers } from "../lib/rpc/peers.ts";
import { startTracing } from "../lib/tracing/sdk.ts";
import { drainProcess, shutdownGraceMs, type AssembledService, type SharedDeps } from "../lib/service-runtime.ts";
import { mkdirSync } from "node:fs";

export interface EmbeddedQuarry {
  url: string;
  port: number;
  /** Stops within graceMs (default QUARRY_SHUTDOWN_GRACE_MS): see drainProcess. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Every service, assembled and prepared in this process (peers through in-memory transports), the
 * gateway last; workers not started, nothing listening. The embedded mode and in-process tests share it.
 */
export async function assembleInProcess(env: Env, shared: SharedDeps): Promise<{ services: AssembledService[]; gateway: AssembledGateway; peers: InProcessPeers }> {
  const peers = new InProcessPeers();
  const services: AssembledService[] = [];
  const add = <S extends AssembledService>(service: S) => {
    services.push(service);
    if (service.name !== "gateway") peers.register(service.name as never, service.server);
    return service;
  };
  add(await assembleEmbedder(env, peers, shared));
  add(assembleParser(env, peers, shared));
  add(await assembleIndex(env, shared, peers));
  add(assembleChunker(env, peers, shared));
  add(assembleAnswer(env, peers, shared));
  const gateway = add(assembleGateway(env, peers, shared));
  // In one process every peer is already here, so start-up calls need no retrying.
  for (const service of services) await service.prepare?.((_what, attempt) => attempt());
  return { services, gateway, peers };
}

export async function startEmbedded(env: Env, logger: Logger): Promise<EmbeddedQuarry> {
  mkdirSync(dataDir(env), { recursive: true });
  const tracing = startTracing(env, "quarry");
  if (tracing) logger.info({ url: tracing.url }, "tracing: spans go to this OTLP endpoint");
  const bus = await openEventBus(env, logger);
  // One registry for every service of the process, exposed on the gateway's port.
  const registry = processMetrics(env);
  registry.watchBacklog(() => pipelineBacklog(bus));
  // The status view's last hour, fed by the same calls as the registry.
  const metrics = new RecentActivity(registry, { requestsOf: publicRequests });
  const shared = { bus, blobs: await openBlobStore(env), logger, redrive: redriveSettings(env), metrics, activity: metrics };
  const { services, gateway } = await assembleInProcess(env, shared);

  const config = gatewayConfig(env);
  await gateway.checkExposure();
  const running = await gateway.server.listen(config.port, config.host);
  const workers: Subscription[] = [];
  for (const service of services) workers.push(...(await service.startWorkers()));
  logger.info({ url: running.url, dataDir: dataDir(env) }, "Quarry is up (embedded)");

  let stopping: Promise<void> | undefined;
  const closers = [...services].reverse().map((s) => ({ name: s.name, close: () => s.close() }));
  return {
    url: running.url,
    port: running.port,
    stop: (graceMs = shutdownGraceMs(env)) =>
      (stopping ??= drainProcess({ servers: [running], workers, closers: [...closers, { name: "bus", close: () => bus.close({ graceMs: 0 }) }, ...(tracing ? [{ name: "tracing", close: () => tracing.stop() }] : [])], logger }, graceMs)),
  };
}
