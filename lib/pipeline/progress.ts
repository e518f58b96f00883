// Publishing ingestion progress, the one message every stage sends. Percentages follow the product:
// parsing 10, chunking 30, embedding 40–90, indexing 95, ready 100.
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { IngestionProgressSchema, type DocumentDescriptor, type IngestionProgress as IngestionProgressProto } from "../../gen/quarry/events/v1/events_pb.ts";
import { Topics, type EventBus } from "../bus/event-bus.ts";
import type { DocumentStatus as DomainStatus, IngestionProgress } from "../domain.ts";

/** `submitted` marks a pending version whose documents.submitted went out (the start-up sweep leaves it alone). */
export const PhasePercent = { pending: 0, submitted: 1, parsing: 10, chunking: 30, embedding: 40, embeddingDone: 90, indexing: 95, ready: 100 } as const;

export interface DocumentRef {
  documentId: string;
  knowledgeBaseId: string;
  version: number;
}

/** The document a pipeline event (parsed, chunks created or embedded) is about. */
export function documentOfEvent(event: { documentId: string; knowledgeBaseId: string; version: bigint }): DocumentRef {
  return { documentId: event.documentId, knowledgeBaseId: event.knowledgeBaseId, version: Number(event.version) };
}

export interface ProgressUpdate {
  phase: DomainStatus;
  percent: number;
  message?: string;
  error?: string;
  chunkCount?: number;
  tokenCount?: number;
  descriptor?: DocumentDescriptor;
}

const statusOf: Record<DomainStatus, DocumentStatus> = {
  pending: DocumentStatus.PENDING,
  parsing: DocumentStatus.PARSING,
  chunking: DocumentStatus.CHUNKING,
  embedding: DocumentStatus.EMBEDDING,
  indexing: DocumentStatus.INDEXING,
  ready: DocumentStatus.READY,
  failed: DocumentStatus.FAILED,
};

const domainOf = new Map(Object.entries(statusOf).map(([k, v]) => [v, k as DomainStatus]));

export function toProtoStatus(status: DomainStatus): DocumentStatus {
  return statusOf[status];
}

export function toDomainStatus(status: DocumentStatus): DomainStatus {
  return domainOf.get(status) ?? "pending";
}

export async function publishProgress(bus: EventBus, doc: DocumentRef, update: ProgressUpdate): Promise<void> {
  const message = create(IngestionProgressSchema, {
    documentId: doc.documentId,
    knowledgeBaseId: doc.knowledgeBaseId,
    version: BigInt(doc.version),
    phase: statusOf[update.phase],
    percent: update.percent,
    message: update.message ?? "",
    error: update.error ?? "",
    chunkCount: update.chunkCount ?? 0,
    tokenCount: update.tokenCount ?? 0,
    at: timestampFromDate(new Date()),
    descriptor: update.descriptor,
  });
  await bus.publish(Topics.ingestionProgress, [{ key: doc.documentId, value: toBinary(IngestionProgressSchema, message) }]);
}

export function progressFromProto(p: IngestionProgressProto): IngestionProgress {
  return {
    documentId: p.documentId,
    knowledgeBaseId: p.knowledgeBaseId,
    version: Number(p.version),
    phase: toDomainStatus(p.phase),
    percent: p.percent,
    message: p.message,
    error: p.error,
    chunkCount: p.chunkCount,
    tokenCount: p.tokenCount,
    at: p.at ? timestampDate(p.at) : new Date(),
  };
}
