import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { DeadLetters } from "./status/dead-letters.ts";
import { healthProbe } from "./status/health-client.ts";
import { AnswerService } from "../gen/quarry/answer/v1/answer_pb.ts";
import { ChunkerService } from "../gen/quarry/chunker/v1/chunker_pb.ts";
import { EmbedderService } from "../gen/quarry/embedder/v1/embedder_pb.ts";
import { IndexService } from "../gen/quarry/index/v1/index_pb.ts";
import { ParserService } from "../gen/quarry/parser/v1/parser_pb.ts";
import type { Env } from "../lib/config.ts";
import type { Logger } from "../lib/logger.ts";
import { ProgressHub } from "../lib/pipeline/progress-hub.ts";
import type { Peers } from "../lib/rpc/peers.ts";
import type { AssembledService, SharedDeps } from "../lib/service-runtime.ts";
import { ApiKeyAuthenticator } from "./access/authenticator.ts";
import { checkBindPolicy, isLoopback } from "./access/bind-policy.ts";
import { gatewayConfig } from "./config.ts";
import { SourceSchedule } from "./sources/source-schedule.ts";
import type { Sources } from "./sources/sources.ts";
import { build } from "./server.ts";
import { sweepUnderLease } from "./interrupted-uploads.ts";
import { openLeases } from "../lib/leases/lease-store-from-config.ts";
import type { Leases } from "../lib/leases/leases.ts";
import { Originals } from "./originals.ts";
import { publishSubmission, submissionContent } from "./upload.ts";
import { documentFromProto } from "../lib/proto-convert.ts";
import { publishProgress } from "../lib/pipeline/progress.ts";
import type { BlobStore } from "../lib/blobs/blob-store.ts";
import type { EventBus } from "../lib/bus/event-bus.ts";
import type { Client } from "@connectrpc/connect";
import type { GatewayConfig } from "./config.ts";

export interface AssembledGateway extends AssembledService {
  /** Before listening: refuses to expose a Quarry that has no API key (see access/bind-policy.ts). */
  checkExposure(): Promise<void>;
}

export function assembleGateway(env: Env, peers: Peers, shared: SharedDeps): AssembledGateway {
  const config = gatewayConfig(env);
  const logger = shared.logger.child({ service: "gateway" });
  const hub = new ProgressHub(shared.bus);
  const startedAt = new Date();
  // The sweep's lease, in the engine the replicas share; opened with the workers, closed after them.
  let leases: Leases | undefined;
  const stopping = new AbortController();
  const index = createClient(IndexService, peers.transport("index"));
  const authenticator = new ApiKeyAuthenticator({
    index,
    bootstrapKey: config.apiKey,
    openWithoutKeys: isLoopback(config.host) || config.insecure,
    openOnlyToLoopbackHosts: !config.insecure,
  });
  let sources: Sources | undefined;
  return {
    checkExposure: () => checkBindPolicy({ host: config.host, insecure: config.insecure, keysConfigured: () => authenticator.keysConfigured(), logger }),
    name: "gateway",
    server: build({
      index,
      chunker: createClient(ChunkerService, peers.transport("chunker")),
      parser: createClient(ParserService, peers.transport("parser")),
      embedder: createClient(EmbedderService, peers.transport("embedder")),
      answer: createClient(AnswerService, peers.transport("answer")),
      bus: shared.bus,
      hub,
      limits: config.limits,
      blobs: shared.blobs,
      corsOrigins: config.corsOrigins,
      consoleDir: config.consoleDir,
      access: { authenticator, index },
      keysChanged: () => authenticator.keysChanged(),
      onSources: (s) => (sources = s),
      logger,
      metrics: shared.metrics,
      status: {
        mode: "url" in peers ? "distributed" : "embedded",
        bus: shared.bus,
        health: healthProbe(peers),
        activity: shared.activity,
        deadLetters: new DeadLetters({ bus: shared.bus, document: (id) => catalogDocument(index, id) }),
        traceViewerUrl: config.traceViewerUrl,
      },
    }),
    startWorkers: async () => {
      await hub.start();
      leases = await openLeases(env, logger);
      // In the background: the gateway serves meanwhile, and a failed sweep is retried at the next start.
      void sweepUnderLease(leases, sweepDeps(index, shared.bus, shared.blobs, config.limits, logger), startedAt, stopping.signal).catch((error: unknown) => {
        if (!stopping.signal.aborted) logger.warn({ err: error }, "the sweep of interrupted uploads failed; it runs again at the next start");
      });
      sources!.useLeases(leases);
      void sources!.recoverInterrupted().catch((error: unknown) => logger.warn({ err: error }, "could not mark interrupted source syncs; the next start tries again"));
      const schedule = new SourceSchedule(sources!, { tickMs: config.sourceTickMs, logger });
      schedule.start();
      return [{ close: (options) => hub.close(options) }, { close: () => schedule.stop() }];
    },
    close: async () => {
      stopping.abort();
      await leases?.close();
    },
  };
}

/** A document as the catalog has it, or undefined when it has none by that id. */
async function catalogDocument(index: Client<typeof IndexService>, id: string) {
  try {
    return documentFromProto((await index.getDocument({ documentId: id })).document!);
  } catch (error) {
    if (ConnectError.from(error).code === Code.NotFound) return undefined;
    throw error;
  }
}

/** The sweep's reads through the index, and its writes through the upload path's own steps. */
function sweepDeps(index: Client<typeof IndexService>, bus: EventBus, blobs: BlobStore, limits: GatewayConfig["limits"], logger: Logger) {
  const originals = new Originals(blobs);
  return {
    logger,
    async pendingDocuments() {
      const { knowledgeBases } = await index.listKnowledgeBases({});
      const documents = [];
      for (const kb of knowledgeBases) documents.push(...(await index.listDocuments({ knowledgeBaseId: kb.id })).documents.map(documentFromProto));
      return documents.filter((d) => d.status === "pending");
    },
    readOriginal: (kb: string, doc: string) => originals.read(kb, doc),
    resubmit: async (doc: Parameters<typeof publishSubmission>[1], content: Uint8Array) =>
      publishSubmission(bus, doc, await submissionContent(limits, blobs, doc.id, doc.version, content)),
    fail: (doc: { id: string; knowledgeBaseId: string; version: number }, reason: string) =>
      publishProgress(bus, { documentId: doc.id, knowledgeBaseId: doc.knowledgeBaseId, version: doc.version }, { phase: "failed", percent: 0, error: reason }),
  };
}
