// Two consumers: the indexing stage (chunks.embedded → the search engine, superseded versions
// dropped) and the status keeper (ingestion.progress → the catalog).
import { ChunksEmbeddedSchema, IngestionProgressSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { assertOwned, Topics, type EventBus, type Subscription } from "../../lib/bus/event-bus.ts";
import type { EmbeddedChunk } from "../../lib/domain.ts";
import { FailedPreconditionError, NotFoundError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import { documentOfEvent, PhasePercent, progressFromProto, publishProgress } from "../../lib/pipeline/progress.ts";
import { startRedrive, type RedriveSettings } from "../../lib/pipeline/redrive.ts";
import { decodeOrReject, runStage } from "../../lib/pipeline/stage.ts";
import { wholeEvent, type StagePayloads } from "../../lib/pipeline/stage-payloads.ts";
import { chunkFromProto, documentVersionFromProto } from "../../lib/proto-convert.ts";
import type { Catalog } from "./catalog/catalog.ts";
import { describeCarriedEdits } from "./catalog/carry-edits.ts";
import type { ChunkEdits } from "./catalog/chunk-edits.ts";
import type { ModelChanges } from "./catalog/model-change.ts";
import type { SearchEngine } from "./search/search-engine.ts";
import { inSpan } from "../../lib/tracing/spans.ts";

export interface IndexWorkerDeps {
  redrive?: Partial<RedriveSettings>;
  metrics?: Metrics;
  bus: EventBus;
  catalog: Catalog;
  engine: SearchEngine;
  logger: Logger;
  /** Stores chunks embedded with another model than the base's (before a switch) after embedding them again. */
  modelChanges?: Pick<ModelChanges, "storeDocumentChunks">;
  /** Carries a document's hand edits over to its new version (carry-edits.ts); absent: a new version replaces them. */
  chunkEdits?: Pick<ChunkEdits, "carryOver">;
  /**
   * Documents written at once (default 8). On OpenSearch and Elasticsearch the chunk writes of the
   * documents in hand share one engine write (a search, a _bulk, a refresh: document-store-engine.ts),
   * so under load more of them in hand means fewer, larger writes; writes of different documents
   * touch disjoint records, and one document's events stay in order.
   */
  concurrency?: number;
  /** Where a large chunks.embedded is read from; a ready version removes its document's older payloads. */
  payloads?: StagePayloads;
}

export async function startIndexWorkers(deps: IndexWorkerDeps): Promise<Subscription[]> {
  return [
    await startStatusKeeper(deps),
    // Progress dead-lettered while the catalog's store was down comes back, so no status sticks.
    await startRedrive({ bus: deps.bus, topic: Topics.ingestionProgress, group: STATUS_GROUP, logger: deps.logger, settings: deps.redrive }),
    await startIndexingStage(deps),
  ];
}

const STATUS_GROUP = "index.status";

function startIndexingStage(deps: IndexWorkerDeps) {
  const { bus, catalog, engine, logger } = deps;
  return runStage({
    name: "index",
    concurrency: deps.concurrency ?? 8,
    redrive: deps.redrive,
    metrics: deps.metrics,
    bus,
    topic: Topics.chunksEmbedded,
    schema: ChunksEmbeddedSchema,
    logger,
    documentOf: documentOfEvent,
    async handle(small, message) {
      const ref = documentOfEvent(small);
      const { version } = ref;
      let current;
      try {
        current = await catalog.getDocument(small.documentId);
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
        await deps.payloads?.dropVersion(ref);
        return logger.info({ documentId: small.documentId }, "document deleted while in flight; chunks dropped");
      }
      if (current.version > version) {
        await deps.payloads?.dropVersion(ref);
        return logger.info({ documentId: small.documentId, version, current: current.version }, "superseded version dropped");
      }
      if (current.version === version && current.status === "ready") {
        return logger.info({ documentId: small.documentId, version }, "version already indexed; redelivery skipped");
      }
      const event = small.payloadUri ? decodeOrReject(ChunksEmbeddedSchema, { ...message, value: await wholeEvent(deps.payloads, small, message.value) }) : small;
      assertOwned(message);
      await publishProgress(bus, ref, { phase: "indexing", percent: PhasePercent.indexing, message: "saving" });
      let chunks: EmbeddedChunk[] = event.chunks.map((c) => ({ ...chunkFromProto(c.chunk!), vector: Float32Array.from(c.vector) }));
      let edits = "";
      if (deps.chunkEdits) {
        const carried = await deps.chunkEdits.carryOver(event.knowledgeBaseId, event.documentId, chunks);
        chunks = carried.chunks;
        edits = describeCarriedEdits(carried.carried);
        if (edits) logger.info({ documentId: event.documentId, version: Number(version) }, `chunk edits: ${edits}`);
      }
      const documentVector = event.documentVector.length > 0 ? Float32Array.from(event.documentVector) : undefined;
      await inSpan("engine write", { "quarry.chunk_count": chunks.length }, async () => {
        if (deps.modelChanges) await deps.modelChanges.storeDocumentChunks(event.knowledgeBaseId, event.documentId, event.fileName, event.embeddingModel, chunks, documentVector);
        else await engine.replaceDocumentChunks(event.knowledgeBaseId, event.documentId, event.fileName, chunks, documentVector);
      });
      if (!current.enabled) await engine.setDocumentEnabled(event.knowledgeBaseId, event.documentId, false);
      const tokenCount = chunks.reduce((sum, c) => sum + c.tokenCount, 0);
      // The ready message says what the new version did to hand edits (the CLI and console show it).
      const ready = { phase: "ready" as const, percent: PhasePercent.ready, message: edits ? `done; chunk edits: ${edits}` : "done", chunkCount: chunks.length, tokenCount };
      // Applied here as well as through the topic so the status is ready the moment search can see the chunks.
      await catalog.applyProgress({ ...ref, ...ready, error: "", at: new Date(), ...(edits ? { chunkEdits: edits } : {}) });
      await publishProgress(bus, ref, ready);
      // Space, not correctness: a failure here leaves blobs the next ready version removes.
      await deps.payloads?.dropSuperseded(ref).catch((error: unknown) => logger.warn({ err: error, documentId: ref.documentId }, "older versions' stage outputs not removed"));
    },
  });
}

/** Progress events applied at once: each is a read and a write of the catalog, mostly waiting on the store. */
const STATUS_CONCURRENCY = 8;

function startStatusKeeper({ bus, catalog, logger }: IndexWorkerDeps) {
  return bus.subscribe({
    group: STATUS_GROUP,
    topics: [Topics.ingestionProgress],
    // One document's events still apply one at a time and in order (the key is the document).
    concurrency: STATUS_CONCURRENCY,
    handler: async (message) => {
      const p = decodeOrReject(IngestionProgressSchema, message);
      const d = p.descriptor;
      if (d) {
        try {
          await catalog.registerDocument(documentVersionFromProto(d));
        } catch (error) {
          // An older version than the catalog's, or a knowledge base deleted meanwhile: nothing to record.
          if (!(error instanceof FailedPreconditionError || error instanceof NotFoundError)) throw error;
          logger.info({ documentId: p.documentId, reason: (error as Error).message }, "progress descriptor not registered");
        }
      }
      await catalog.applyProgress(progressFromProto(p));
    },
  });
}
