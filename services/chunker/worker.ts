// The chunking stage: documents.parsed → chunks.created, with the knowledge base's settings.
import { create, toBinary } from "@bufbuild/protobuf";
import { ChunksCreatedSchema, DocumentParsedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { assertOwned, Topics, type EventBus } from "../../lib/bus/event-bus.ts";
import type { KnowledgeBase } from "../../lib/domain.ts";
import type { Logger } from "../../lib/logger.ts";
import { documentOfEvent, PhasePercent, publishProgress } from "../../lib/pipeline/progress.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import type { RedriveSettings } from "../../lib/pipeline/redrive.ts";
import { runStage } from "../../lib/pipeline/stage.ts";
import { wholeEvent, type StagePayloads } from "../../lib/pipeline/stage-payloads.ts";
import { staleVersion, type CurrentVersion } from "../../lib/rpc/document-version-lookup.ts";
import type { ChunkingThreads } from "./chunking-threads.ts";
import type { ModelTokens } from "./model-tokens.ts";
import { inSpan } from "../../lib/tracing/spans.ts";

export interface ChunkerWorkerDeps {
  /** How dead-lettered events come back; the defaults unless configured. */
  redrive?: Partial<RedriveSettings>;
  metrics?: Metrics;
  bus: EventBus;
  /** A model's tokenizer and input limit; chunks are sized in the knowledge base's model's tokens. */
  tokensFor(model: string): Promise<ModelTokens>;
  /** Most chunks one document may become; unlimited when absent. */
  maxChunks?: number;
  /** The knowledge base's chunking settings and model (from the index service), as read after readAfterMs. */
  knowledgeBase(knowledgeBaseId: string, readAfterMs?: number): Promise<Pick<KnowledgeBase, "chunking" | "embeddingModel">>;
  logger: Logger;
  /** The catalog's current version of a document: a deleted or superseded version is not chunked. */
  currentVersion: CurrentVersion;
  /** Where splitting and encoding run, off the thread that renews the bus lease. */
  threads: ChunkingThreads;
  /** Where a large documents.parsed is read from and a large chunks.created goes (absent: all inline). */
  payloads?: StagePayloads;
}

export function startChunkerWorker(deps: ChunkerWorkerDeps) {
  const { bus } = deps;
  return runStage({
    name: "chunker",
    redrive: deps.redrive,
    metrics: deps.metrics,
    bus,
    topic: Topics.documentsParsed,
    schema: DocumentParsedSchema,
    logger: deps.logger,
    documentOf: documentOfEvent,
    async handle(event, message) {
      const doc = documentOfEvent(event);
      const stale = await staleVersion(deps.currentVersion, event.documentId, event.version);
      if (stale) return deps.logger.info({ documentId: event.documentId, reason: stale }, "document not chunked: stale version");
      await publishProgress(bus, doc, { phase: "chunking", percent: PhasePercent.chunking, message: "splitting" });
      // The thread decodes the text: the main thread only moves the bytes.
      const documentParsed = await wholeEvent(deps.payloads, event, message.value);
      // The version is the submission time: settings cached from before it may predate an update.
      const kb = await deps.knowledgeBase(event.knowledgeBaseId, Number(event.version));
      const tokens = await deps.tokensFor(kb.embeddingModel);
      const task = { kind: "event", documentParsed, settings: kb.chunking, tokens, maxChunks: deps.maxChunks, documentId: event.documentId, knowledgeBaseId: event.knowledgeBaseId, version: event.version, fileName: event.fileName } as const;
      const out = await inSpan("split", { "quarry.file_name": event.fileName }, () => deps.threads.run(task, event.fileName));
      // Held too long (or taken over meanwhile): the new holder publishes, once.
      assertOwned(message);
      const identity = { documentId: event.documentId, knowledgeBaseId: event.knowledgeBaseId, version: event.version, fileName: event.fileName };
      const value = deps.payloads
        ? await deps.payloads.claimCheck(doc, Topics.chunksCreated, out, (payloadUri) => toBinary(ChunksCreatedSchema, create(ChunksCreatedSchema, { ...identity, payloadUri })))
        : out;
      await bus.publish(Topics.chunksCreated, [{ key: event.documentId, value }]);
    },
  });
}
