// `quarry doctor` for an embedded Quarry: reads its SQLite file (and the blob store's originals) and says
// where the catalog, the chunks, the vectors, the keyword index and the originals disagree, which
// documents are stuck mid-ingest, and how many messages wait in dead-letter topics. With repair it
// fixes what is safe to fix without the server: chunks no catalog document owns are deleted, and a
// document stuck past the bound is marked failed with the reason (a person then re-ingests it).
// Run it with Quarry stopped when repairing; a check alone is safe while it serves (WAL readers).
import { existsSync } from "node:fs";
import { openBlobStore } from "../lib/blobs/blob-store-from-config.ts";
import { sqlitePath, type Env } from "../lib/config.ts";
import { NotFoundError } from "../lib/errors.ts";
import { openDatabase, SqliteSearchEngine, keywordIndexSize } from "../services/index/index.ts";

export interface DoctorFinding {
  check: string;
  /** How many things the check found wrong (0: fine). */
  count: number;
  detail: string;
  /** What --repair did about it, when it did something. */
  repaired?: string;
}

/** A document in a working phase with no progress for this long is stuck (ingestion retries take minutes, not hours). */
export const STUCK_AFTER_MS = 60 * 60 * 1000;
const WORKING = ["pending", "parsing", "chunking", "embedding", "indexing"];

export interface OrphanedChunks {
  knowledgeBaseId: string;
  documentId: string;
  chunks: number;
}

/** Chunks of document ids the catalog does not have; with a repair, each such document's chunks deleted. */
export async function orphanChunksFinding(orphans: OrphanedChunks[], repair?: (orphan: OrphanedChunks) => Promise<void>): Promise<DoctorFinding> {
  const chunks = orphans.reduce((sum, o) => sum + o.chunks, 0);
  const finding: DoctorFinding = { check: "chunks no catalog document owns", count: chunks, detail: orphans.length ? `${orphans.length} document id(s)` : "" };
  if (repair && orphans.length > 0) {
    for (const o of orphans) await repair(o);
    finding.repaired = `deleted ${chunks} chunk(s)`;
  }
  return finding;
}

export async function doctorEmbedded(env: Env, options: { repair?: boolean; now?: number } = {}): Promise<DoctorFinding[]> {
  const file = sqlitePath(env);
  if (!existsSync(file)) throw new NotFoundError(`there is no embedded Quarry at ${file}`);
  const db = openDatabase(file);
  const engine = new SqliteSearchEngine(db, { ownsDatabase: false });
  const findings: DoctorFinding[] = [];
  try {
    const all = <T>(sql: string, ...params: unknown[]) => db.prepare(sql).all(...params) as T[];

    const counts = all<{ id: string; file_name: string; chunk_count: number; stored: number }>(
      `SELECT d.id, d.file_name, d.chunk_count, (SELECT COUNT(*) FROM chunks c WHERE c.document_id = d.id AND c.knowledge_base_id = d.knowledge_base_id) AS stored
       FROM documents d WHERE d.status = 'ready'`,
    ).filter((d) => d.stored !== d.chunk_count);
    findings.push({ check: "ready documents whose chunk count the store does not hold", count: counts.length, detail: counts.slice(0, 5).map((d) => `${d.file_name}: catalog ${d.chunk_count}, stored ${d.stored}`).join("; ") });

    const orphans = all<{ knowledge_base_id: string; document_id: string; n: number }>(
      `SELECT knowledge_base_id, document_id, COUNT(*) AS n FROM chunks c
       WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = c.document_id AND d.knowledge_base_id = c.knowledge_base_id)
       GROUP BY knowledge_base_id, document_id`,
    );
    findings.push(
      await orphanChunksFinding(
        orphans.map((o) => ({ knowledgeBaseId: o.knowledge_base_id, documentId: o.document_id, chunks: o.n })),
        options.repair ? (o) => engine.deleteDocument(o.knowledgeBaseId, o.documentId) : undefined,
      ),
    );

    let missingVectors = 0;
    let keywordDrift = 0;
    for (const space of all<{ knowledge_base_id: string; vector_table: string; keyword_table: string }>(`SELECT knowledge_base_id, vector_table, keyword_table FROM search_spaces`)) {
      const chunks = (db.prepare(`SELECT COUNT(*) AS n FROM chunks WHERE knowledge_base_id = ?`).get(space.knowledge_base_id) as { n: number }).n;
      const vectors = (db.prepare(`SELECT COUNT(*) AS n FROM "${space.vector_table}"`).get() as { n: number }).n;
      missingVectors += Math.max(0, chunks - vectors);
      keywordDrift += Math.abs(keywordIndexSize(db, space.keyword_table).rows - chunks);
    }
    findings.push({ check: "chunks without a vector", count: missingVectors, detail: "" });
    findings.push({ check: "keyword index rows that differ from the chunks (BM25 statistics)", count: keywordDrift, detail: "" });

    const now = options.now ?? Date.now();
    const stuck = all<{ id: string; file_name: string; status: string; updated_at: number }>(
      `SELECT id, file_name, status, updated_at FROM documents WHERE status IN (${WORKING.map(() => "?").join(", ")}) AND updated_at < ?`,
      ...WORKING,
      now - STUCK_AFTER_MS,
    );
    const stuckFinding: DoctorFinding = { check: `documents stuck mid-ingest for over ${STUCK_AFTER_MS / 60_000} minutes`, count: stuck.length, detail: stuck.slice(0, 5).map((d) => `${d.file_name} (${d.status})`).join("; ") };
    if (options.repair && stuck.length > 0) {
      const fail = db.prepare(`UPDATE documents SET status = 'failed', progress_percent = 100, error_message = ?, updated_at = ? WHERE id = ?`);
      for (const d of stuck) fail.run(`stuck in ${d.status} since ${new Date(d.updated_at).toISOString()}; marked failed by quarry doctor --repair: re-ingest it`, now, d.id);
      stuckFinding.repaired = `marked ${stuck.length} failed with the reason`;
    }
    findings.push(stuckFinding);

    // In whichever store keeps them (the blob folder, or S3 with QUARRY_BLOB_URL).
    const kept = new Set(await (await openBlobStore(env)).list("originals/"));
    const missing = all<{ id: string; knowledge_base_id: string }>(`SELECT id, knowledge_base_id FROM documents`).filter((d) => !kept.has(`originals/${d.knowledge_base_id}/${d.id}`));
    findings.push({ check: "documents without a kept original (re-ingest needs them uploaded again)", count: missing.length, detail: "" });

    const hasBus = db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'bus_messages'`).get() !== undefined;
    const dlq = hasBus ? all<{ topic: string; n: number }>(`SELECT topic, COUNT(*) AS n FROM bus_messages WHERE topic LIKE '%.dlq' GROUP BY topic`) : [];
    findings.push({ check: "messages in dead-letter topics", count: dlq.reduce((sum, t) => sum + t.n, 0), detail: dlq.map((t) => `${t.topic}: ${t.n}`).join("; ") });
  } finally {
    await engine.close();
    db.close();
  }
  return findings;
}
