// A tiny soak on the real embedded server (20 documents, one kill -9, a 10 s chat phase), then the
// ledger checked against the SQLite rows it was computed from, and tampered with row by row: a
// chunk deleted, a chunk stored twice, a document removed from the catalog, one left mid-pipeline.
// Each must move its own counter, so the bench cannot report zeros it did not count.
import Database from "better-sqlite3";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSoak, type SoakFacts, type SoakReport } from "./bench-soak.ts";
import { accountSoak } from "./soak-accounting.ts";
import { startEmbeddedSoakTarget } from "./soak-embedded.ts";
import { readSqliteCatalog, readSqliteChunks } from "./soak-stores.ts";
import type { SoakTarget } from "./soak-target.ts";
import { rm } from "node:fs/promises";

describe("bench soak (embedded, 20 documents, one kill -9)", () => {
  let target: SoakTarget;
  let report: SoakReport;
  let facts: SoakFacts;
  let dbFile: string;

  beforeAll(async () => {
    target = await startEmbeddedSoakTarget({ kills: 1 });
    ({ report, facts } = await runSoak(target, {
      documents: 20,
      uploadConcurrency: 4,
      chatStreams: 5,
      chatDurationMs: 10_000,
      settleTimeoutMs: 600_000,
      retryForMs: 300_000,
      seed: 3,
    }));
    // Stopped, so the tampering below is the only writer.
    await target.stop({ keepData: true });
    dbFile = join(target.dataDir, "quarry.db");
  }, 900_000);

  afterAll(async () => {
    if (target) await rm(target.dataDir, { recursive: true, force: true });
  });

  it("survives the kill: every document READY once, nothing lost or stored twice, no stream error", () => {
    expect(report.faults).toHaveLength(1);
    expect(report.faults[0].atTerminal).toBeLessThan(20);
    expect(report.account.submitted).toBe(20);
    expect(report.account.ready).toBe(20);
    expect(report.account.lost).toEqual([]);
    expect(report.account.duplicateRows).toBe(0);
    expect(report.account.countMismatches).toEqual([]);
    expect(report.ingest.storedChunks).toBe(report.ingest.expectedChunks);
    expect(report.ingest.expectedChunks).toBeGreaterThan(20);
    expect(report.chat.streams).toBeGreaterThan(0);
    expect(report.chat.errors).toBe(0);
    expect(report.chat.firstEvent!.p50).toBeGreaterThan(0);
  });

  it("counts from the rows in the file: the same ledger read straight from SQLite", () => {
    const catalog = readSqliteCatalog(dbFile, facts.knowledgeBaseId);
    const chunks = readSqliteChunks(dbFile, facts.knowledgeBaseId);
    expect(chunks).toHaveLength(facts.chunks.length);
    expect(accountSoak(facts.submitted, catalog, chunks)).toEqual(report.account);
  });

  it("moves its counters when rows are tampered with", () => {
    const db = new Database(dbFile);
    const [a, b, c, d] = readSqliteCatalog(dbFile, facts.knowledgeBaseId).sort((x, y) => x.fileName.localeCompare(y.fileName));
    try {
      // A chunk of a lost: a count mismatch.
      db.prepare("DELETE FROM chunks WHERE rowid = (SELECT MAX(rowid) FROM chunks WHERE document_id = ?)").run(a.documentId);
      // A chunk of b stored twice: one duplicate row.
      db.prepare(
        `INSERT INTO chunks (id, knowledge_base_id, document_id, file_name, chunk_index, text, token_count, page, page_end, section_path, start_offset, end_offset, enabled)
         SELECT id || '-again', knowledge_base_id, document_id, file_name, chunk_index, text, token_count, page, page_end, section_path, start_offset, end_offset, enabled
         FROM chunks WHERE document_id = ? AND chunk_index = 0`,
      ).run(b.documentId);
      // c gone from the catalog, d never finished: both lost; c's rows are orphans now.
      db.prepare("DELETE FROM documents WHERE id = ?").run(c.documentId);
      db.prepare("UPDATE documents SET status = 'embedding' WHERE id = ?").run(d.documentId);
    } finally {
      db.close();
    }
    const account = accountSoak(facts.submitted, readSqliteCatalog(dbFile, facts.knowledgeBaseId), readSqliteChunks(dbFile, facts.knowledgeBaseId));
    expect(account.countMismatches.map((m) => m.fileName)).toEqual([a.fileName]);
    expect(account.countMismatches[0].stored).toBe(a.chunkCount - 1);
    expect(account.duplicateRows).toBe(1);
    expect(account.documentsWithDuplicateOrdinals).toBe(1);
    expect(account.lost).toEqual([
      { fileName: c.fileName, why: "missing from the catalog" },
      { fileName: d.fileName, why: "never reached a terminal state (EMBEDDING)" },
    ]);
    expect(account.orphanRows).toBe(c.chunkCount + d.chunkCount);
    expect(account.ready).toBe(18);
  });
});
