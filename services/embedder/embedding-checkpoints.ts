// A document's embedding progress, kept per batch, so a restart in the middle of a large document
// continues where it stopped instead of from zero, and a redelivered chunks.created of a version
// already published is skipped. In a SQLite file of the embedder's own (beside its data), written
// once per batch: a batch of 64 vectors of 384 floats is 98 KB.
//
// Hand-written rather than a library: it is two tables and five statements on better-sqlite3,
// which the project already uses for its embedded stores.
import Database from "better-sqlite3";

/** One document version embedded with one model: the unit a checkpoint belongs to. */
export interface CheckpointKey {
  documentId: string;
  version: bigint;
  model: string;
}

export interface EmbeddingCheckpoints {
  /** The vectors already stored for the key, by input position (holes where none is stored). */
  load(key: CheckpointKey): (Float32Array | undefined)[];
  /** Stores the vectors of inputs start, start + 1, …; durable when this returns. */
  save(key: CheckpointKey, start: number, vectors: readonly Float32Array[]): void;
  /** True once finish() recorded the key's output as published. */
  isFinished(key: CheckpointKey): boolean;
  /** Records the key's output as published and drops its batches and the document's older versions. */
  finish(key: CheckpointKey): void;
  close(): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS embed_batches (
  document_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  model TEXT NOT NULL,
  start INTEGER NOT NULL,
  dimension INTEGER NOT NULL,
  vectors BLOB NOT NULL,
  PRIMARY KEY (document_id, version, model, start)
);
CREATE TABLE IF NOT EXISTS embed_finished (
  document_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  model TEXT NOT NULL,
  finished_at INTEGER NOT NULL,
  PRIMARY KEY (document_id, version, model)
);
CREATE INDEX IF NOT EXISTS embed_finished_at ON embed_finished (finished_at);
`;

/** Finished marks older than this are dropped: a redelivery comes within hours, not weeks. */
const FINISHED_KEPT_MS = 7 * 24 * 3600_000;

export class SqliteEmbeddingCheckpoints implements EmbeddingCheckpoints {
  readonly #db: Database.Database;
  readonly #statements;

  /** @param file a path (":memory:" keeps nothing across restarts) */
  constructor(file: string) {
    this.#db = new Database(file);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("synchronous = NORMAL");
    this.#db.pragma("busy_timeout = 5000");
    this.#db.exec(SCHEMA);
    const db = this.#db;
    this.#statements = {
      batches: db.prepare<[string, bigint, string], { start: number; dimension: number; vectors: Buffer }>(
        "SELECT start, dimension, vectors FROM embed_batches WHERE document_id = ? AND version = ? AND model = ? ORDER BY start",
      ),
      save: db.prepare("INSERT OR REPLACE INTO embed_batches (document_id, version, model, start, dimension, vectors) VALUES (?, ?, ?, ?, ?, ?)"),
      finished: db.prepare<[string, bigint, string], { one: number }>("SELECT 1 AS one FROM embed_finished WHERE document_id = ? AND version = ? AND model = ?"),
      markFinished: db.prepare("INSERT OR IGNORE INTO embed_finished (document_id, version, model, finished_at) VALUES (?, ?, ?, ?)"),
      dropBatches: db.prepare("DELETE FROM embed_batches WHERE document_id = ? AND version <= ?"),
      dropOlderFinished: db.prepare("DELETE FROM embed_finished WHERE (document_id = ? AND version < ?) OR finished_at < ?"),
    };
  }

  load(key: CheckpointKey): (Float32Array | undefined)[] {
    const vectors: (Float32Array | undefined)[] = [];
    for (const row of this.#statements.batches.all(key.documentId, key.version, key.model)) {
      const floats = new Float32Array(row.vectors.buffer.slice(row.vectors.byteOffset, row.vectors.byteOffset + row.vectors.byteLength));
      for (let i = 0; i * row.dimension < floats.length; i++) vectors[row.start + i] = floats.subarray(i * row.dimension, (i + 1) * row.dimension);
    }
    return vectors;
  }

  save(key: CheckpointKey, start: number, vectors: readonly Float32Array[]): void {
    if (vectors.length === 0) return;
    const dimension = vectors[0].length;
    const packed = new Float32Array(dimension * vectors.length);
    vectors.forEach((vector, i) => packed.set(vector, i * dimension));
    this.#statements.save.run(key.documentId, key.version, key.model, start, dimension, Buffer.from(packed.buffer));
  }

  isFinished(key: CheckpointKey): boolean {
    return this.#statements.finished.get(key.documentId, key.version, key.model) !== undefined;
  }

  finish(key: CheckpointKey): void {
    const now = Date.now();
    this.#db.transaction(() => {
      this.#statements.markFinished.run(key.documentId, key.version, key.model, now);
      this.#statements.dropBatches.run(key.documentId, key.version);
      this.#statements.dropOlderFinished.run(key.documentId, key.version, now - FINISHED_KEPT_MS);
    })();
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
