// The rules for a document's versions and ingestion status, as pure functions over records, so the
// SQLite and the OpenSearch catalogs store the same decisions (each only reads, decides, writes).
import { isRetryingFailure, type DocumentRecord, type DocumentStatus, type IngestionProgress } from "../../../lib/domain.ts";
import { FailedPreconditionError } from "../../../lib/errors.ts";
import type { NewDocumentVersion, RegisteredDocument } from "./catalog.ts";

const PHASE_ORDER: Record<DocumentStatus, number> = {
  pending: 0,
  parsing: 1,
  chunking: 2,
  embedding: 3,
  indexing: 4,
  ready: 5,
  failed: 5,
};

export function isTerminal(status: DocumentStatus): boolean {
  return status === "ready" || status === "failed";
}

export type RegistrationDecision =
  /** Nothing to write; answer with this. */
  | { write: false; result: RegisteredDocument }
  /** Store this record (insert or overwrite) and answer with it. */
  | { write: true; result: RegisteredDocument };

/** A fresh pending record for a document version. */
export function pendingDocument(id: string, input: NewDocumentVersion, now: Date, previous?: DocumentRecord): DocumentRecord {
  return {
    id,
    knowledgeBaseId: input.knowledgeBaseId,
    fileName: input.fileName,
    mimeType: input.mimeType,
    sizeBytes: input.sizeBytes,
    contentHash: input.contentHash,
    version: input.version,
    status: "pending",
    progressPercent: 0,
    chunkCount: 0,
    tokenCount: 0,
    errorMessage: "",
    enabled: previous?.enabled ?? true,
    metadata: { ...input.metadata },
    createdAt: previous?.createdAt ?? now,
    updatedAt: now,
    ...(input.traceId ? { traceId: input.traceId } : {}),
  };
}

/**
 * What registering a version does to the existing record (if any):
 * - none yet → a new pending record;
 * - the same version again → the stored record as it is (a retried call gets the first call's answer);
 * - same content, and the pipeline has taken the stored version (past pending, not failed) →
 *   unchanged, nothing written. A version still pending may never have reached the bus (the
 *   gateway registers, then publishes; a broker outage between the two fails the upload), so the
 *   client's retry registers a new version and the gateway publishes it: the older one, if it was
 *   published after all, is superseded and its progress ignored. A re-ingest is never unchanged;
 * - an older version than the stored one → FailedPreconditionError (a newer submission won);
 * - otherwise → the new version, pending, progress and error cleared; enabled and createdAt kept.
 */
export function decideRegistration(id: string, existing: DocumentRecord | undefined, input: NewDocumentVersion, now: Date): RegistrationDecision {
  if (!existing) return { write: true, result: { document: pendingDocument(id, input, now), unchanged: false } };
  if (existing.version === input.version) return { write: false, result: { document: existing, unchanged: false } };
  if (!input.reingest && existing.contentHash === input.contentHash && existing.status !== "failed" && existing.status !== "pending") {
    return { write: false, result: { document: existing, unchanged: true } };
  }
  if (input.version < existing.version) {
    throw new FailedPreconditionError(
      `document ${input.fileName} already has version ${existing.version}, newer than the submitted ${input.version}`,
    );
  }
  return { write: true, result: { document: pendingDocument(id, input, now, existing), unchanged: false } };
}

/**
 * The record after a stage's progress, or null when the progress is ignored: an older version than
 * the stored one. Within one version the status only moves forward and a ready or failed version
 * is final (redelivered or late messages return the record unchanged) — except that a final
 * failure turns into a retrying one when an operator re-drives its dead letter (the redrive says so
 * with a retrying failure first). A newer version than the stored one (its registration not seen
 * here yet) replaces the status outright.
 */
export function progressedDocument(current: DocumentRecord, progress: IngestionProgress, now: Date): DocumentRecord | null {
  if (progress.version < current.version) return null;
  const sameVersion = progress.version === current.version;
  // A failure that will be retried is not final: the retry's progress moves the document on.
  const retrying = current.status === "failed" && isRetryingFailure(current.errorMessage);
  const reopened = current.status === "failed" && progress.phase === "failed" && isRetryingFailure(progress.error);
  if (sameVersion && !retrying && !reopened) {
    if (isTerminal(current.status)) return current;
    if (PHASE_ORDER[progress.phase] < PHASE_ORDER[current.status]) return current;
  }
  const percent = progress.phase === "ready" ? 100 : clampPercent(progress.percent);
  return {
    ...current,
    version: progress.version,
    status: progress.phase,
    progressPercent: sameVersion ? Math.max(current.progressPercent, percent) : percent,
    chunkCount: progress.chunkCount > 0 || progress.phase === "ready" ? progress.chunkCount : sameVersion ? current.chunkCount : 0,
    tokenCount: progress.tokenCount > 0 || progress.phase === "ready" ? progress.tokenCount : sameVersion ? current.tokenCount : 0,
    errorMessage: progress.phase === "failed" ? progress.error || progress.message || "ingestion failed" : "",
    ...chunkEditsAfter(current, progress, sameVersion),
    updatedAt: now,
  };
}

function clampPercent(percent: number): number {
  if (!Number.isFinite(percent)) return 0;
  return Math.min(100, Math.max(0, percent));
}

/** The version's note on hand edits: set by the index's own ready, kept within the version, gone with a new one. */
function chunkEditsAfter(current: DocumentRecord, progress: IngestionProgress, sameVersion: boolean): Pick<DocumentRecord, "chunkEdits"> {
  const note = progress.chunkEdits || (sameVersion ? current.chunkEdits : undefined);
  return note ? { chunkEdits: note } : {};
}
