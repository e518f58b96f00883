// The approximate kNN list of the embedded store: one usearch HNSW index per chunk-vector table (a
// knowledge base under one embedding model), beside the SQLite file, chosen by `quarry bench ann`
// (docs/benchmarks/ann.md: the only candidate with its linux-x64 binary in the npm tarball, the fastest
// build and a file it can save, load and memory-map).
//
// SQLite stays the truth. Every write to a chunk-vector table also appends (table, rowid) to
// vector_index_changes in the same transaction; the index remembers the last change it applied
// (its file is named after it). Before answering, an index takes in the changes after that one,
// re-reading each row from SQLite, so it answers from what SQLite holds now: a write lost with a
// killed process, another process's write, or a file saved before them is caught up, never missed.
// An index file is loaded only if it is the one the last recorded save wrote (its name and SHA-256:
// usearch trusts a file's header, and a damaged one can make it allocate without bound) and, caught
// up, holds exactly the table's enabled rows; anything else (a save killed before its record, a
// file from another database) is rebuilt from SQLite's rows.
//
// Only enabled rows are in an index, so a disabled chunk is a removal and the list never needs the
// flag. Small tables stay on sqlite-vec's exact scan (exactBelow), as do very selective document
// filters (chooseKnnPlan).
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { Index, MetricKind, ScalarKind } from "usearch";
import type { SqliteDatabase } from "./open-database.ts";
import { StatementCache } from "./statement-cache.ts";

export type VectorIndexMode = "exact" | "hnsw";

export interface ApproximateKnnOptions {
  mode: VectorIndexMode;
  /** Tables with fewer enabled vectors than this are scanned exactly. */
  exactBelow: number;
  /** Changes taken in since the last save after which an index is saved again. */
  saveEvery: number;
  /**
   * Candidates the HNSW search keeps while it walks the graph (usearch's expansion_search; ef in
   * the papers); HNSW_PARAMETERS' when unset. Higher finds more of the exact top k where many
   * vectors are about equally near a query, at a cost that grows about linearly (docs/benchmarks/ann.md).
   */
  expansionSearch?: number;
}

/**
 * sqlite-vec's exact scan grows linearly, about 0.6 ms per 1,000 384-d vectors on a quiet machine
 * (50–70 ms at 100k, docs/BENCHMARKS.md); below 20,000 it stays near 12 ms, about a BM25 list's
 * cost, and such a base needs no index in memory, no build and no file, and its answers are exact.
 */
export const DEFAULT_EXACT_BELOW = 20_000;
const DEFAULT_SAVE_EVERY = 20_000;

export const DEFAULT_APPROXIMATE_KNN: ApproximateKnnOptions = { mode: "hnsw", exactBelow: DEFAULT_EXACT_BELOW, saveEvery: DEFAULT_SAVE_EVERY };

/** The HNSW parameters; `quarry bench ann` measures the index with these very values. */
export const HNSW_PARAMETERS = { connectivity: 16, expansion_add: 128, expansion_search: 128 } as const;

export interface Neighbour {
  rowid: number;
  distance: number;
}

/** How one table's kNN is answered for a query: the exact scan, or the index asked for `fetch` neighbours. */
export type KnnPlan = { kind: "exact" } | { kind: "approximate"; fetch: number };

/**
 * The filter rule: without a document filter the index is asked for k. With one, it is asked for
 * k divided by the share of the table's vectors the filter keeps, doubled (so a filter keeping half
 * the rows asks for 4k), and the neighbours outside the filter are dropped; when that share is below
 * 1/16 the exact scan is used instead (it is no dearer than over-fetching that much), and so it is
 * when the filtered answer still comes up short (approximateKnn returns undefined).
 */
export function chooseKnnPlan(k: number, tableRows: number, filteredRows: number | undefined, exactBelow: number): KnnPlan {
  if (tableRows < exactBelow || tableRows === 0) return { kind: "exact" };
  if (filteredRows === undefined) return { kind: "approximate", fetch: k };
  const share = filteredRows / tableRows;
  if (share < 1 / 16) return { kind: "exact" };
  return { kind: "approximate", fetch: Math.min(tableRows, Math.ceil((k / share) * 2)) };
}

/** The change log and the saved-index registry; created here so the approximate index stays one module. */
export function createChangeLog(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS vector_index_changes (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      vector_table TEXT NOT NULL,
      row INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS vector_index_changes_by_table ON vector_index_changes (vector_table, seq);
    CREATE TABLE IF NOT EXISTS vector_index_saves (
      vector_table TEXT PRIMARY KEY,
      seq INTEGER NOT NULL,
      sha256 TEXT NOT NULL
    );
  `);
}

interface TableIndex {
  index: Index;
  /** The last change taken in. */
  applied: number;
  /** The change the file on disk was saved at (0: none). */
  saved: number;
}

/**
 * writer: the connection that writes (logs changes, builds, saves, trims). reader: a read-only
 * connection on a search thread (read-threads.ts), which only loads the writer's saved files and
 * catches up from the log; a table with no loadable save is answered by the exact scan there.
 */
export type ApproximateKnnRole = "writer" | "reader";

export class ApproximateKnn {
  private readonly tables = new Map<string, TableIndex>();
  private readonly dir: string | undefined;
  private unsaved = 0;
  /**
   * Each small table's enabled-row count as of a state of the file: counting a sqlite-vec table reads
   * all its rows (5 ms of a 25 ms hybrid search at 10,000 chunks), and every search of a base below
   * exactBelow asked. The state is this connection's own writes (every one is recorded below) and
   * SQLite's data_version, which moves when another connection commits.
   */
  private readonly counted = new Map<string, { state: string; rows: number }>();
  private ownWrites = 0;

  constructor(
    private readonly db: SqliteDatabase,
    readonly options: ApproximateKnnOptions,
    private readonly role: ApproximateKnnRole = "writer",
    /** The connection's kept statements, shared with the engine on it. */
    private readonly statements: StatementCache = new StatementCache(db),
  ) {
    if (role === "writer") {
      createChangeLog(db);
      // With the index off no change is logged, so no saved file may be trusted when it is turned on again.
      if (!this.enabled) db.exec(`DELETE FROM vector_index_saves; DELETE FROM vector_index_changes;`);
    }
    // An in-memory database has nowhere to keep a file: its indexes are rebuilt on each start.
    this.dir = db.memory || !db.name ? undefined : join(dirname(db.name), `${basename(db.name)}.vectors`);
  }

  get enabled(): boolean {
    return this.options.mode === "hnsw";
  }

  /** Records that a row of a chunk-vector table changed; call inside the write's transaction. */
  recordChange(table: string, rowid: number | bigint): void {
    if (!this.enabled) return;
    this.unsaved++;
    this.ownWrites++;
    this.statements.prepare(`INSERT INTO vector_index_changes (vector_table, row) VALUES (?, ?)`).run(table, BigInt(rowid));
  }

  /** Forgets a dropped table: its index, its file and its log (call inside the drop's transaction). */
  dropTable(table: string): void {
    this.tables.delete(table);
    this.counted.delete(table);
    this.statements.prepare(`DELETE FROM vector_index_changes WHERE vector_table = ?`).run(table);
    this.statements.prepare(`DELETE FROM vector_index_saves WHERE vector_table = ?`).run(table);
    for (const file of this.filesOf(table)) rmSync(join(this.dir!, file), { force: true });
  }

  /** The table's `fetch` nearest enabled rows from its index (loaded or built on first use), caught up with SQLite first. */
  nearest(table: string, vector: Float32Array, fetch: number): Neighbour[] {
    const entry = this.role === "reader" ? this.saved(table) : this.current(table);
    // A reader whose save vanished between the count and the search: none, so the exact scan answers.
    if (!entry) return [];
    const matches = entry.index.search(vector, Math.min(fetch, Math.max(1, entry.index.size())), 1);
    const out: Neighbour[] = [];
    for (let i = 0; i < matches.keys.length; i++) out.push({ rowid: Number(matches.keys[i]), distance: matches.distances[i] });
    return out;
  }

  /** How many enabled vectors the table holds (what the plan compares with exactBelow). */
  enabledRows(table: string): number {
    // A reader counts only what its loaded index holds: 0 (the exact scan) until the writer has saved one.
    if (this.role === "reader") return this.saved(table)?.index.size() ?? 0;
    const entry = this.tables.get(table);
    if (!entry) return this.countEnabledNow(table);
    this.catchUp(table, entry);
    return entry.index.size();
  }

  /** Every saveEvery recorded changes, a checkpoint. Call after a write commits. */
  afterWrite(): void {
    if (this.unsaved >= this.options.saveEvery) this.checkpoint({ buildMissing: true });
  }

  /**
   * Brings the indexes in memory up to date, with buildMissing also every large live table's
   * (building it the first time, so a base that grows past exactBelow gets its index during ingest
   * rather than on its first search; not on close, where a short-lived command would pay for a
   * build it never uses), saves those that changed, and trims the log: a saved index needs only the
   * changes after its save, a table without one none. Writes: call outside any transaction.
   */
  checkpoint(options: { buildMissing: boolean }): void {
    this.unsaved = 0;
    // A reader never writes: saving is the writer's.
    if (!this.enabled || this.role === "reader") return;
    const live = (this.statements.prepare(`SELECT vector_table FROM search_spaces`).all() as { vector_table: string }[]).map((row) => row.vector_table);
    for (const table of live) {
      if (this.tables.has(table) || (options.buildMissing && this.countEnabled(table) >= this.options.exactBelow)) this.db.transaction(() => this.current(table))();
    }
    for (const [table, entry] of this.tables) if (entry.applied !== entry.saved) this.save(table, entry);
    this.statements
      .prepare(`DELETE FROM vector_index_changes WHERE vector_table NOT IN (SELECT vector_table FROM vector_index_saves) AND vector_table NOT IN (SELECT value FROM json_each(?))`)
      .run(JSON.stringify([...this.tables.keys()]));
  }

  private save(table: string, entry: TableIndex): void {
    if (!this.dir) return;
    mkdirSync(this.dir, { recursive: true });
    const name = `${table}.${entry.applied}.usearch`;
    // Written aside and renamed: a killed save leaves the old file whole.
    entry.index.save(join(this.dir, `${name}.partial`));
    const sha256 = fileSha256(join(this.dir, `${name}.partial`));
    renameSync(join(this.dir, `${name}.partial`), join(this.dir, name));
    this.db
      .transaction(() => {
        this.statements
          .prepare(`INSERT INTO vector_index_saves (vector_table, seq, sha256) VALUES (?, ?, ?) ON CONFLICT (vector_table) DO UPDATE SET seq = excluded.seq, sha256 = excluded.sha256`)
          .run(table, entry.applied, sha256);
        this.statements.prepare(`DELETE FROM vector_index_changes WHERE vector_table = ? AND seq <= ?`).run(table, entry.applied);
      })
      .immediate();
    for (const file of this.filesOf(table)) if (file !== name) rmSync(join(this.dir, file), { force: true });
    entry.saved = entry.applied;
  }

  close(): void {
    this.tables.clear();
  }

  /** The table's index as of SQLite's latest change: loaded or built on first use, then caught up. */
  private current(table: string): TableIndex {
    let entry = this.tables.get(table);
    if (!entry) {
      entry = this.load(table) ?? this.build(table);
      this.tables.set(table, entry);
    }
    this.catchUp(table, entry);
    return entry;
  }

  /**
   * A reader's index: the writer's last recorded save, loaded once and then caught up from the log.
   * A newer save means the writer trimmed the log up to it, so the changes between this index's
   * last and that save are gone from the log: the newer file is loaded instead. Call inside the
   * search's read transaction, so the record, the log and the rows are one snapshot.
   */
  private saved(table: string): TableIndex | undefined {
    const recorded = this.statements.prepare(`SELECT seq FROM vector_index_saves WHERE vector_table = ?`).get(table) as { seq: number } | undefined;
    let entry = this.tables.get(table);
    if (!recorded) {
      this.tables.delete(table);
      return undefined;
    }
    if (entry && recorded.seq <= entry.applied) {
      this.catchUp(table, entry);
      return entry;
    }
    entry = this.load(table);
    if (entry) this.tables.set(table, entry);
    else this.tables.delete(table);
    return entry;
  }

  private catchUp(table: string, entry: TableIndex): void {
    const changes = this.statements
      .prepare(`SELECT seq, row FROM vector_index_changes WHERE vector_table = ? AND seq > ? ORDER BY seq`)
      .all(table, entry.applied) as { seq: number; row: number }[];
    if (changes.length === 0) return;
    const read = this.statements.prepare(`SELECT embedding FROM "${table}" WHERE rowid = ? AND enabled = 1`);
    for (const rowid of new Set(changes.map((change) => change.row))) {
      const key = BigInt(rowid);
      if (entry.index.contains(key)) entry.index.remove(key);
      const row = read.get(key) as { embedding: Buffer } | undefined;
      if (row) entry.index.add(key, blobVector(row.embedding), 1);
    }
    entry.applied = changes[changes.length - 1].seq;
  }

  /** The saved index, if it is the file the recorded save wrote and it matches SQLite once caught up. */
  private load(table: string): TableIndex | undefined {
    if (!this.dir) return undefined;
    const recorded = this.statements.prepare(`SELECT seq, sha256 FROM vector_index_saves WHERE vector_table = ?`).get(table) as { seq: number; sha256: string } | undefined;
    if (!recorded || recorded.seq > this.highestChange()) return undefined;
    const path = join(this.dir, `${table}.${recorded.seq}.usearch`);
    try {
      if (fileSha256(path) !== recorded.sha256) return undefined;
      const index = this.newIndex(this.dimensionOf(table));
      index.load(path);
      const entry: TableIndex = { index, applied: recorded.seq, saved: recorded.seq };
      this.catchUp(table, entry);
      return index.size() === this.countEnabled(table) ? entry : undefined;
    } catch {
      return undefined;
    }
  }

  private newIndex(dimension: number): Index {
    // A saved index keeps the search expansion it is loaded or viewed with, so a changed setting
    // applies from the next start without a rebuild.
    const expansion_search = this.options.expansionSearch ?? HNSW_PARAMETERS.expansion_search;
    return new Index({ dimensions: dimension, metric: MetricKind.Cos, quantization: ScalarKind.F32, ...HNSW_PARAMETERS, expansion_search, multi: false });
  }

  /** A new index over every enabled row of the table, as of the log's last change. */
  private build(table: string): TableIndex {
    const applied = this.lastChange(table);
    const rows = this.statements.prepare(`SELECT rowid, embedding FROM "${table}" WHERE enabled = 1`).all() as { rowid: number; embedding: Buffer }[];
    const dimension = rows.length > 0 ? rows[0].embedding.byteLength / 4 : this.dimensionOf(table);
    const index = this.newIndex(dimension);
    if (rows.length > 0) {
      const keys = new BigUint64Array(rows.length);
      const vectors = new Float32Array(rows.length * dimension);
      rows.forEach((row, i) => {
        keys[i] = BigInt(row.rowid);
        vectors.set(blobVector(row.embedding), i * dimension);
      });
      // One thread: usearch's concurrent insertion (threads 0 = every core) now and then left a graph
      // whose search missed a vector's own nearest neighbour: approximate-knn.test.ts's self-queries
      // on 100 vectors failed in 4 of 6 runs with it, 0 of 8 with one thread.
      index.add(keys, vectors, 1);
    }
    return { index, applied, saved: 0 };
  }

  private dimensionOf(table: string): number {
    const row = this.statements.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`).get(table) as { sql: string } | undefined;
    const match = row && /float\[(\d+)\]/.exec(row.sql);
    if (!match) throw new Error(`vector table ${table} has no float[] column`);
    return Number(match[1]);
  }

  private countEnabledNow(table: string): number {
    const state = `${this.ownWrites}:${this.db.pragma("data_version", { simple: true }) as number}`;
    const known = this.counted.get(table);
    if (known?.state === state) return known.rows;
    const rows = this.countEnabled(table);
    this.counted.set(table, { state, rows });
    return rows;
  }

  private countEnabled(table: string): number {
    return (this.statements.prepare(`SELECT count(*) AS n FROM "${table}" WHERE enabled = 1`).get() as { n: number }).n;
  }

  private lastChange(table: string): number {
    const row = this.statements.prepare(`SELECT max(seq) AS seq FROM vector_index_changes WHERE vector_table = ?`).get(table) as { seq: number | null };
    return Math.max(row.seq ?? 0, 0);
  }

  /** The log's highest sequence number ever given out (AUTOINCREMENT keeps it after trims). */
  private highestChange(): number {
    const row = this.statements.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'vector_index_changes'`).get() as { seq: number } | undefined;
    return row?.seq ?? 0;
  }

  private filesOf(table: string): string[] {
    if (!this.dir) return [];
    // Table names are plain identifiers (space-tables.ts): safe file names as they are.
    const stem = `${table}.`;
    try {
      return readdirSync(this.dir).filter((file) => file.startsWith(stem) && file.endsWith(".usearch"));
    } catch {
      return [];
    }
  }
}

function fileSha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** A copy: the blob's bytes belong to the statement's buffer and need not be 4-byte aligned. */
function blobVector(blob: Buffer): Float32Array {
  const copy = new Uint8Array(blob.byteLength);
  copy.set(blob);
  return new Float32Array(copy.buffer);
}
