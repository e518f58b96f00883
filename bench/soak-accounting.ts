// The soak's ledger: what was submitted (file name and the chunker's own chunk count for its bytes)
// against what the catalog says and what the chunk store really holds. Pure, so the same counting
// runs on the embedded SQLite rows and on OpenSearch's, and a test can tamper with real rows and
// watch the counters move.
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";

export interface SubmittedDocument {
  fileName: string;
  /** PreviewChunks' total for the same bytes and knowledge base: what the pipeline must store. */
  expectedChunks: number;
}

export interface CatalogEntry {
  documentId: string;
  fileName: string;
  status: DocumentStatus;
  error: string;
  chunkCount: number;
}

export interface StoredChunk {
  documentId: string;
  ordinal: number;
}

export interface SoakAccount {
  submitted: number;
  ready: number;
  failed: { fileName: string; reason: string }[];
  /** Acknowledged by an upload but missing from the catalog, or never in a terminal state. */
  lost: { fileName: string; why: string }[];
  /** Documents with some (document, ordinal) stored more than once. */
  documentsWithDuplicateOrdinals: number;
  /** Rows beyond the first for a (document, ordinal). */
  duplicateRows: number;
  /** READY documents whose distinct stored ordinals or catalog count differ from the chunker's count. */
  countMismatches: { fileName: string; expected: number; stored: number; catalog: number }[];
  /** Chunk rows of a document the catalog does not list as READY (an old version, a failed one, a deleted one). */
  orphanRows: number;
}

export function accountSoak(submitted: readonly SubmittedDocument[], catalog: readonly CatalogEntry[], chunks: readonly StoredChunk[]): SoakAccount {
  const byFile = new Map(catalog.map((entry) => [entry.fileName, entry]));
  const rowsByDocument = new Map<string, number[]>();
  for (const chunk of chunks) {
    const rows = rowsByDocument.get(chunk.documentId);
    if (rows) rows.push(chunk.ordinal);
    else rowsByDocument.set(chunk.documentId, [chunk.ordinal]);
  }

  const account: SoakAccount = {
    submitted: submitted.length,
    ready: 0,
    failed: [],
    lost: [],
    documentsWithDuplicateOrdinals: 0,
    duplicateRows: 0,
    countMismatches: [],
    orphanRows: 0,
  };
  const readyIds = new Set<string>();
  for (const document of submitted) {
    const entry = byFile.get(document.fileName);
    if (!entry) {
      account.lost.push({ fileName: document.fileName, why: "missing from the catalog" });
      continue;
    }
    if (entry.status === DocumentStatus.FAILED) {
      account.failed.push({ fileName: document.fileName, reason: entry.error || "(no reason given)" });
      continue;
    }
    if (entry.status !== DocumentStatus.READY) {
      account.lost.push({ fileName: document.fileName, why: `never reached a terminal state (${DocumentStatus[entry.status] ?? entry.status})` });
      continue;
    }
    account.ready++;
    readyIds.add(entry.documentId);
    const ordinals = rowsByDocument.get(entry.documentId) ?? [];
    const distinct = new Set(ordinals).size;
    if (distinct < ordinals.length) {
      account.documentsWithDuplicateOrdinals++;
      account.duplicateRows += ordinals.length - distinct;
    }
    if (distinct !== document.expectedChunks || entry.chunkCount !== document.expectedChunks) {
      account.countMismatches.push({ fileName: document.fileName, expected: document.expectedChunks, stored: distinct, catalog: entry.chunkCount });
    }
  }
  for (const [documentId, ordinals] of rowsByDocument) if (!readyIds.has(documentId)) account.orphanRows += ordinals.length;
  return account;
}

