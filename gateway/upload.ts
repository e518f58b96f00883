// Accepting an upload: check it, keep its bytes, register the version with the catalog, and put it
// on the bus. Large files travel by reference (a blob in the blob store: the shared folder, or S3)
// so no event outgrows the bus. The order is what makes a crash harmless: the bytes are on disk before the catalog row
// exists, and the row before the submission, so a process that dies between two steps leaves either
// no row (orphan bytes, overwritten by the next upload) or a pending row whose bytes are kept, which
// the start-up sweep (interrupted-uploads.ts) submits again. After the submission a progress mark
// ("submitted", 1%) tells the sweep that this row needs nothing.
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { DocumentSubmittedSchema } from "../gen/quarry/events/v1/events_pb.ts";
import type { BlobStore } from "../lib/blobs/blob-store.ts";
import { Topics, type EventBus } from "../lib/bus/event-bus.ts";
import { documentIdFor } from "../lib/catalog-ids.ts";
import type { DocumentRecord, NewDocumentVersion } from "../lib/domain.ts";
import { InvalidInputError, TooLargeError } from "../lib/errors.ts";
import { PhasePercent, publishProgress } from "../lib/pipeline/progress.ts";

export interface UploadLimits {
  maxUploadBytes: number;
  /** Above this the bytes go to the blob store and the event carries its reference (file:// or s3://). */
  inlineMaxBytes: number;
}

export interface UploadDeps {
  bus: EventBus;
  limits: UploadLimits;
  blobs: BlobStore;
  resolveKnowledgeBase(idOrName: string): Promise<{ id: string; name: string }>;
  register(input: NewDocumentVersion): Promise<{ document: DocumentRecord; unchanged: boolean }>;
  /** Refuses a file Quarry does not read, with the reason (the parser's rule); absent: the parser alone decides. */
  checkReadable?(fileName: string, mimeType: string, content: Uint8Array): Promise<void>;
  /** Keeps the uploaded bytes for a later re-ingest (originals.ts); absent: nothing is kept. */
  keepOriginal?(knowledgeBaseId: string, documentId: string, content: Uint8Array): Promise<void>;
}

export interface UploadInput {
  knowledgeBase: string;
  fileName: string;
  mimeType: string;
  metadata: Record<string, string>;
  content: Uint8Array;
  /** Ingest again even when the content is unchanged (ReingestDocument). */
  reingest?: boolean;
}

/** How much of an upload the parser's reading rule reads (services/parser/reading-rule.ts's RULE_HEAD_BYTES). */
export const READING_RULE_HEAD_BYTES = 64 * 1024;

let lastVersion = 0;
/** Milliseconds since the epoch, but strictly increasing within this process. */
function nextVersion(): number {
  lastVersion = Math.max(Date.now(), lastVersion + 1);
  return lastVersion;
}

/**
 * The document's name: a relative path is kept (folder ingest names intro/README.md and
 * api/README.md apart), without "." and ".." segments; an absolute path (a client that sent where
 * the file was) is cut to its base name. It is a label only: no file is ever opened by it.
 */
export function documentName(given: string): string {
  const path = given.replaceAll("\\", "/").trim();
  if (path.startsWith("/") || /^[a-z]:/i.test(path)) return basename(path).trim();
  return path
    .split("/")
    .map((segment) => segment.trim())
    .filter((segment) => segment !== "" && segment !== "." && segment !== "..")
    .join("/");
}

export function checkUpload(input: UploadInput, limits: UploadLimits): string {
  const fileName = documentName(input.fileName);
  if (!fileName) throw new InvalidInputError("the upload needs a file name");
  if (!input.knowledgeBase.trim()) throw new InvalidInputError("the upload needs a knowledge base");
  if (input.content.byteLength === 0) throw new InvalidInputError(`${fileName} is empty (0 bytes): there is nothing to ingest`);
  if (input.content.byteLength > limits.maxUploadBytes) {
    throw new TooLargeError(
      `${fileName} is ${input.content.byteLength} bytes; the upload limit is ${limits.maxUploadBytes} bytes (QUARRY_MAX_UPLOAD_BYTES)`,
    );
  }
  return fileName;
}

type SubmittedContent = { case: "inlineContent"; value: Uint8Array } | { case: "contentUri"; value: string };

/** Where a version too large for its event waits for the parser. */
export const submissionKey = (documentId: string, version: number) => `${documentId}-${version}`;

/** The event's content: the bytes themselves, or (above inlineMaxBytes) a blob's reference. */
export async function submissionContent(limits: UploadLimits, blobs: BlobStore, documentId: string, version: number, bytes: Uint8Array): Promise<SubmittedContent> {
  if (bytes.byteLength <= limits.inlineMaxBytes) return { case: "inlineContent", value: bytes };
  const key = submissionKey(documentId, version);
  await blobs.put(key, bytes);
  return { case: "contentUri", value: blobs.reference(key) };
}

/** Puts a registered version on documents.submitted, then marks it submitted. */
export async function publishSubmission(bus: EventBus, doc: Pick<DocumentRecord, "id" | "knowledgeBaseId" | "fileName" | "mimeType" | "version" | "metadata">, content: SubmittedContent): Promise<void> {
  const event = create(DocumentSubmittedSchema, {
    documentId: doc.id,
    knowledgeBaseId: doc.knowledgeBaseId,
    fileName: doc.fileName,
    mimeType: doc.mimeType,
    version: BigInt(doc.version),
    metadata: doc.metadata,
    content,
  });
  await bus.publish(Topics.documentsSubmitted, [{ key: doc.id, value: toBinary(DocumentSubmittedSchema, event) }]);
  // Lost mark (a crash right here, the bus gone): the sweep submits the version again, which the
  // stages treat as the redelivery it is.
  const ref = { documentId: doc.id, knowledgeBaseId: doc.knowledgeBaseId, version: doc.version };
  await publishProgress(bus, ref, { phase: "pending", percent: PhasePercent.submitted, message: "submitted" }).catch(() => {});
}

export async function submitDocument(deps: UploadDeps, input: UploadInput) {
  const fileName = checkUpload(input, deps.limits);
  await deps.checkReadable?.(fileName, input.mimeType, input.content);
  const kb = await deps.resolveKnowledgeBase(input.knowledgeBase);
  const version = nextVersion();
  const documentId = documentIdFor(kb.id, fileName);
  // Kept for unchanged content too: it is the same bytes, and a document uploaded before originals
  // were kept gets one this way.
  await deps.keepOriginal?.(kb.id, documentId, input.content);
  const content = await submissionContent(deps.limits, deps.blobs, documentId, version, input.content);
  const dropBlob = () => (content.case === "contentUri" ? deps.blobs.delete(submissionKey(documentId, version)) : Promise.resolve());
  let registered: Awaited<ReturnType<UploadDeps["register"]>>;
  try {
    registered = await deps.register({
      knowledgeBaseId: kb.id,
      fileName,
      mimeType: input.mimeType,
      sizeBytes: input.content.byteLength,
      contentHash: createHash("sha256").update(input.content).digest("hex"),
      version,
      metadata: input.metadata,
      ...(input.reingest ? { reingest: true } : {}),
    });
  } catch (error) {
    await dropBlob();
    throw error;
  }
  if (registered.unchanged) {
    await dropBlob();
    return registered;
  }
  await publishSubmission(deps.bus, registered.document, content);
  return registered;
}
