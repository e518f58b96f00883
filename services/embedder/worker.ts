// The vectorizing stage: chunks.created → chunks.embedded, reporting 40–90% as batches finish.
import { create, toBinary } from "@bufbuild/protobuf";
import { ChunksCreatedSchema, ChunksEmbeddedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { assertOwned, Topics, type EventBus } from "../../lib/bus/event-bus.ts";
import type { KnowledgeBase } from "../../lib/domain.ts";
import type { Logger } from "../../lib/logger.ts";
import { documentOfEvent, PhasePercent, publishProgress } from "../../lib/pipeline/progress.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import type { RedriveSettings } from "../../lib/pipeline/redrive.ts";
import { runStage } from "../../lib/pipeline/stage.ts";
import { wholeEvent, type StagePayloads } from "../../lib/pipeline/stage-payloads.ts";
import { assertDimension } from "../../lib/dimension-check.ts";
import { staleVersion, type CurrentVersion } from "../../lib/rpc/document-version-lookup.ts";
import { coalescingPool, type EmbedderPool } from "./embedder-pool.ts";
import type { EmbeddingCheckpoints } from "./embedding-checkpoints.ts";
import { inSpan } from "../../lib/tracing/spans.ts";
import { embeddedEvent, embeddingInputs, type EmbeddingInputs } from "./embedding-inputs.ts";
import type { PayloadThreads } from "./payload-threads.ts";

export interface EmbedderWorkerDeps {
  redrive?: Partial<RedriveSettings>;
  metrics?: Metrics;
  bus: EventBus;
  /** The models; each knowledge base's chunks are embedded with its own. */
  models: EmbedderPool;
  knowledgeBase(id: string): Promise<KnowledgeBase>;
  /** The catalog's current version of a document: a deleted or superseded version is skipped unembedded. */
  currentVersion: CurrentVersion;
  /** Each batch's vectors, so a restart resumes a document where it stopped. */
  checkpoints: EmbeddingCheckpoints;
  logger: Logger;
  /** Chunks per progress report. */
  progressEvery?: number;
  /**
   * Documents vectorized at once; their chunks share the model's forward passes. Default 32: with
   * 8, a pass of 7 documents' chunks alternated with a pass of the one document that arrived
   * meanwhile, and bench ingest measured 0.77 of the raw model against 0.89 with 32.
   */
  concurrency?: number;
  /**
   * Chunks sorted by length together across the documents in hand (CoalescingEmbedder's window).
   * Default WINDOW_TEXTS.
   */
  windowTexts?: number;
  /** Where a large chunks.created is read from and a large chunks.embedded goes (absent: all inline). */
  payloads?: StagePayloads;
  /** Decodes and encodes the events that came by reference, off the main thread; needed with `payloads`. */
  payloadThreads?: PayloadThreads;
}

/**
 * About 20 s of the local model on 2 cores: a document that arrives while a window runs waits for
 * one band of it (newcomers go ahead of the next band), and a crash loses at most the window's
 * texts not checkpointed yet, each embedded again once after the restart.
 */
export const WINDOW_TEXTS = 1024;

export function startEmbedderWorker(deps: EmbedderWorkerDeps) {
  const { bus } = deps;
  const step = deps.progressEvery ?? 64;
  // The documents in hand at once send their chunks to the model together (CoalescingEmbedder);
  // only this stage joins calls, so a query embedded through the RPC is never put in a batch (the
  // local model runs a question's pass before the next pass of a document call). The chunks of all
  // the documents waiting, up to WINDOW_TEXTS, are sorted by length together, so passes pad little.
  const models = coalescingPool(deps.models, 256, (model, seconds) => deps.metrics?.embedQueueWait(model, seconds), deps.windowTexts ?? WINDOW_TEXTS);
  return runStage({
    name: "embedder",
    concurrency: deps.concurrency ?? 32,
    redrive: deps.redrive,
    metrics: deps.metrics,
    bus,
    topic: Topics.chunksCreated,
    schema: ChunksCreatedSchema,
    logger: deps.logger,
    documentOf: documentOfEvent,
    async handle(event, busMessage) {
      const doc = documentOfEvent(event);
      const stale = await staleVersion(deps.currentVersion, event.documentId, event.version);
      if (stale) return deps.logger.info({ documentId: event.documentId, reason: stale }, "chunks not embedded: stale version");
      const kb = await deps.knowledgeBase(event.knowledgeBaseId);
      const embedder = await models.get(kb.embeddingModel);
      const key = { documentId: event.documentId, version: event.version, model: embedder.info().model };
      // A redelivery (a lapsed lease, a crash after publishing): the vectors went out already.
      if (deps.checkpoints.isFinished(key)) return deps.logger.info({ documentId: event.documentId }, "chunks already embedded and published; redelivery skipped");
      // A large event's chunks are decoded on a thread; the main thread only sees their inputs.
      const whole = event.payloadUri ? await wholeEvent(deps.payloads, event, busMessage.value) : undefined;
      const plan: EmbeddingInputs = whole ? await payloadThreadsOf(deps).inputs(whole) : embeddingInputs(event);
      const { inputs, documentInput } = plan;
      const total = plan.chunkCount;
      const vectors = deps.checkpoints.load(key);
      const span = PhasePercent.embeddingDone - PhasePercent.embedding;
      const report = (done: number) =>
        publishProgress(bus, doc, { phase: "embedding", percent: PhasePercent.embedding + Math.round((span * done) / total), message: `vectorizing ${done}/${total} chunks` });
      const resumed = countDone(vectors, total);
      if (resumed > 0) deps.logger.info({ documentId: event.documentId, resumed, total }, "embedding resumed from its checkpoint");
      await report(resumed);
      // A document deleted or replaced while its chunks waited in the model's window: its other
      // batches are not embedded and nothing is published. Asked once per batch after the first,
      // so a one-batch document costs no second look-up (the index skips a stale version anyway).
      const goneSince = async () => {
        const reason = await staleVersion(deps.currentVersion, event.documentId, event.version);
        if (reason) deps.logger.info({ documentId: event.documentId, reason }, "embedding stopped: stale version");
        return reason !== undefined;
      };
      for (let i = 0; i < inputs.length; i += step) {
        const batch = inputs.slice(i, i + step);
        if (batch.every((_, j) => vectors[i + j] !== undefined)) continue;
        if (i > 0 && (await goneSince())) return;
        // Per batch: keeps the lease through a long document, and stops at once when it went elsewhere.
        assertOwned(busMessage);
        const out = await inSpan("embed batch", { "quarry.batch_size": batch.length, "quarry.model": kb.embeddingModel }, () => embedder.embed(batch, "document"));
        assertDimension(out, kb.embeddingDimension, { knowledgeBase: kb.name, expectedModel: kb.embeddingModel, actualModel: embedder.info().model });
        deps.checkpoints.save(key, i, out);
        out.forEach((vector, j) => (vectors[i + j] = vector));
        await report(Math.min(total, i + step));
      }
      if (inputs.length > step && (await goneSince())) return;
      const model = embedder.info().model;
      const encoded = whole
        ? await payloadThreadsOf(deps).embedded(whole, model, documentInput, vectors as Float32Array[])
        : toBinary(ChunksEmbeddedSchema, embeddedEvent(event, model, documentInput, (i) => vectors[i]!));
      const identity = { documentId: event.documentId, knowledgeBaseId: event.knowledgeBaseId, version: event.version, fileName: event.fileName, embeddingModel: model };
      const value = deps.payloads
        ? await deps.payloads.claimCheck(doc, Topics.chunksEmbedded, encoded, (payloadUri) => toBinary(ChunksEmbeddedSchema, create(ChunksEmbeddedSchema, { ...identity, payloadUri })))
        : encoded;
      assertOwned(busMessage);
      await bus.publish(Topics.chunksEmbedded, [{ key: event.documentId, value }]);
      deps.checkpoints.finish(key);
    },
  });
}

function payloadThreadsOf(deps: EmbedderWorkerDeps): PayloadThreads {
  if (!deps.payloadThreads) throw new Error("the embedder reads payloads by reference without payload threads");
  return deps.payloadThreads;
}

function countDone(vectors: readonly (Float32Array | undefined)[], total: number): number {
  let done = 0;
  for (let i = 0; i < total; i++) if (vectors[i]) done++;
  return done;
}
