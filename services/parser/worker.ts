// The parsing stage: documents.submitted → documents.parsed. It is also where the catalog first
// hears of a document that a producer outside Quarry submitted (the descriptor on its first
// progress event).
import { createHash } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { DocumentParsedSchema, DocumentSubmittedSchema, type DocumentSubmitted } from "../../gen/quarry/events/v1/events_pb.ts";
import type { BlobStore } from "../../lib/blobs/blob-store.ts";
import { assertOwned, RejectedMessageError, Topics, type BusMessage, type EventBus } from "../../lib/bus/event-bus.ts";
import type { KnowledgeBase } from "../../lib/domain.ts";
import { InvalidInputError, NotFoundError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/logger.ts";
import { PhasePercent, publishProgress, type DocumentRef } from "../../lib/pipeline/progress.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import type { RedriveSettings } from "../../lib/pipeline/redrive.ts";
import { runStage } from "../../lib/pipeline/stage.ts";
import type { StagePayloads } from "../../lib/pipeline/stage-payloads.ts";
import { parsedToProto } from "../../lib/proto-convert.ts";
import { documentIdFor } from "../../lib/catalog-ids.ts";
import { readReferencedContent, RefusedReferenceError } from "./content-reference.ts";
import type { DocumentParser } from "./document-parser.ts";
import { inSpan } from "../../lib/tracing/spans.ts";

/** Fills what outside producers may leave out: the document id and the version. */
export function documentRefOf(event: DocumentSubmitted, message: BusMessage): DocumentRef {
  return {
    documentId: event.documentId || documentIdFor(event.knowledgeBaseId, event.fileName),
    knowledgeBaseId: event.knowledgeBaseId,
    version: Number(event.version) || message.timestamp.getTime(),
  };
}

async function contentOf(event: DocumentSubmitted, fileRefRoots: readonly string[], blobs: BlobStore | undefined): Promise<Uint8Array> {
  if (event.content.case === "inlineContent") return event.content.value;
  if (event.content.case === "contentUri") return readReferencedContent(event.content.value, fileRefRoots, blobs);
  throw new InvalidInputError("the event carries no content (neither inline_content nor content_uri)");
}

/**
 * A submission must name an existing knowledge base by its id. Anything else is rejected: no
 * catalog could record the document's failure, so the dead-letter topic is where its producer
 * learns why (a transient failure of the lookup itself is thrown on and retried as usual).
 */
async function checkKnowledgeBase(event: DocumentSubmitted, knowledgeBase: (id: string) => Promise<KnowledgeBase>): Promise<void> {
  if (!event.knowledgeBaseId) throw new RejectedMessageError("the submission has no knowledge_base_id");
  if (!event.fileName) throw new RejectedMessageError("the submission has no file_name");
  let kb: KnowledgeBase;
  try {
    kb = await knowledgeBase(event.knowledgeBaseId);
  } catch (error) {
    if (error instanceof NotFoundError) throw new RejectedMessageError(`knowledge base ${event.knowledgeBaseId} does not exist`, { cause: error });
    throw error;
  }
  if (kb.id !== event.knowledgeBaseId) {
    throw new RejectedMessageError(`knowledge_base_id must be the knowledge base's id: "${event.knowledgeBaseId}" is the name of ${kb.id}`);
  }
}

export interface ParserWorkerDeps {
  bus: EventBus;
  parser: DocumentParser;
  /** The knowledge base with this id or name (the index service's); throws NotFoundError. */
  knowledgeBase(idOrName: string): Promise<KnowledgeBase>;
  logger: Logger;
  redrive?: Partial<RedriveSettings>;
  metrics?: Metrics;
  /** Where file:// content_uri references may point (see content-reference.ts); none: every file reference is refused. */
  fileRefRoots?: readonly string[];
  /** The blob store the gateway leaves large uploads in: an s3:// reference is read from it, under its root only. */
  blobs?: BlobStore;
  /** Where a large documents.parsed goes, the bus carrying its reference (absent: all inline). */
  payloads?: StagePayloads;
}

export function startParserWorker(deps: ParserWorkerDeps) {
  const { bus, parser } = deps;
  return runStage({
    name: "parser",
    redrive: deps.redrive,
    metrics: deps.metrics,
    bus,
    topic: Topics.documentsSubmitted,
    schema: DocumentSubmittedSchema,
    logger: deps.logger,
    documentOf: documentRefOf,
    async handle(event, message) {
      const doc = documentRefOf(event, message);
      await checkKnowledgeBase(event, deps.knowledgeBase);
      let bytes: Uint8Array;
      try {
        bytes = await contentOf(event, deps.fileRefRoots ?? [], deps.blobs);
      } catch (error) {
        // A reference outside the allowed folders is refused for good: the document fails with the
        // reason (the stage reports it) and the event stays, dead, for whoever sent it.
        if (error instanceof RefusedReferenceError) throw new RejectedMessageError(error.message, { cause: error });
        throw error;
      }
      await publishProgress(bus, doc, {
        phase: "parsing",
        percent: PhasePercent.parsing,
        message: "parsing",
        descriptor: {
          $typeName: "quarry.events.v1.DocumentDescriptor",
          documentId: doc.documentId,
          knowledgeBaseId: doc.knowledgeBaseId,
          fileName: event.fileName,
          mimeType: event.mimeType,
          sizeBytes: BigInt(bytes.byteLength),
          contentHash: createHash("sha256").update(bytes).digest("hex"),
          version: BigInt(doc.version),
          metadata: { ...event.metadata },
        },
      });
      const parsed = await inSpan("parse", { "quarry.file_name": event.fileName, "quarry.bytes": bytes.byteLength }, () =>
        parser.parse({ bytes, fileName: event.fileName, declaredMimeType: event.mimeType }),
      );
      const identity = { documentId: doc.documentId, knowledgeBaseId: doc.knowledgeBaseId, version: BigInt(doc.version), fileName: event.fileName };
      const out = toBinary(DocumentParsedSchema, create(DocumentParsedSchema, { ...identity, parsed: parsedToProto(parsed) }));
      assertOwned(message);
      const value = deps.payloads
        ? await deps.payloads.claimCheck(doc, Topics.documentsParsed, out, (payloadUri) => toBinary(DocumentParsedSchema, create(DocumentParsedSchema, { ...identity, payloadUri })))
        : out;
      await bus.publish(Topics.documentsParsed, [{ key: doc.documentId, value }]);
    },
  });
}
