// What the soak's ledger is checked against, read from the stores themselves rather than through
// Quarry (which would report what it believes, not what it wrote): the embedded SQLite file's
// chunk and document rows, or OpenSearch's chunk records under a run's index prefix.
import Database from "better-sqlite3";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import type { CatalogEntry, StoredChunk } from "./soak-accounting.ts";

const STATUS: Record<string, DocumentStatus> = {
  pending: DocumentStatus.PENDING,
  parsing: DocumentStatus.PARSING,
  chunking: DocumentStatus.CHUNKING,
  embedding: DocumentStatus.EMBEDDING,
  indexing: DocumentStatus.INDEXING,
  ready: DocumentStatus.READY,
  failed: DocumentStatus.FAILED,
};

/** Every chunk row of a knowledge base in the embedded index file (read-only; WAL lets the server keep writing). */
export function readSqliteChunks(dbFile: string, knowledgeBaseId: string): StoredChunk[] {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT document_id AS documentId, chunk_index AS ordinal FROM chunks WHERE knowledge_base_id = ?").all(knowledgeBaseId) as StoredChunk[]);
  } finally {
    db.close();
  }
}

/** The embedded catalog's document rows of a knowledge base, as ListDocuments would report them. */
export function readSqliteCatalog(dbFile: string, knowledgeBaseId: string): CatalogEntry[] {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare("SELECT id, file_name, status, error_message, chunk_count FROM documents WHERE knowledge_base_id = ?")
      .all(knowledgeBaseId) as { id: string; file_name: string; status: string; error_message: string; chunk_count: number }[];
    return rows.map((r) => ({ documentId: r.id, fileName: r.file_name, status: STATUS[r.status] ?? DocumentStatus.UNSPECIFIED, error: r.error_message, chunkCount: r.chunk_count }));
  } finally {
    db.close();
  }
}

/** Every chunk record of a knowledge base under `<prefix>-chunks-*` (the index service's naming), read with a scroll. */
export async function readOpenSearchChunks(opensearchUrl: string, indexPrefix: string, knowledgeBaseId: string): Promise<StoredChunk[]> {
  const base = opensearchUrl.replace(/\/$/, "");
  const indices = `${base}/${indexPrefix}-chunks-*`;
  const post = async (url: string, body: object) => {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`reading chunk records from OpenSearch: HTTP ${response.status} ${await response.text()}`);
    return (await response.json()) as { _scroll_id?: string; hits: { hits: { _source: { document_id: string; chunk_index: number } }[] } };
  };
  await post(`${indices}/_refresh?ignore_unavailable=true&allow_no_indices=true`, {});
  const chunks: StoredChunk[] = [];
  let page = await post(`${indices}/_search?scroll=1m&ignore_unavailable=true&allow_no_indices=true`, {
    size: 5000,
    _source: ["document_id", "chunk_index"],
    query: { bool: { filter: [{ term: { record_type: "chunk" } }, { term: { knowledge_base_id: knowledgeBaseId } }] } },
  });
  try {
    while (page.hits.hits.length > 0) {
      for (const hit of page.hits.hits) chunks.push({ documentId: hit._source.document_id, ordinal: hit._source.chunk_index });
      if (!page._scroll_id) break;
      page = await post(`${base}/_search/scroll`, { scroll: "1m", scroll_id: page._scroll_id });
    }
  } finally {
    if (page._scroll_id) await fetch(`${base}/_search/scroll`, { method: "DELETE", headers: { "content-type": "application/json" }, body: JSON.stringify({ scroll_id: page._scroll_id }) }).catch(() => {});
  }
  return chunks;
}
