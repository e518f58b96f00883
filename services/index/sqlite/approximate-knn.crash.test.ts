// The approximate index's crash-safety contract: a process writing chunks is killed with SIGKILL
// wherever it happens to be (inside a transaction, between a commit and the index update, halfway
// through saving the index file); on restart every chunk SQLite holds is found by its own vector and
// no document the writer deleted comes back.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openDatabase } from "./open-database.ts";
import { SqliteSearchEngine } from "./sqlite-search-engine.ts";
import { fixtureVector, vectorQuery } from "../testing/vector-fixtures.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("approximate kNN index through kill -9", () => {
  it("finds every chunk that survived in SQLite by its own vector, and never a deleted one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "quarry-ann-crash-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "index.sqlite");
    const knowledgeBaseId = "kb_crash";

    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("../testing/vector-writer.crash-child.ts", import.meta.url)), file, knowledgeBaseId], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => child.on("exit", resolve));
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    // Well past several index saves (every 40 changes), so the restart loads a file and replays the log after it.
    await vi.waitFor(() => expect(output).toContain("wrote doc45\n"), { timeout: 120_000, interval: 20 });
    child.kill("SIGKILL");
    await exited;
    expect(child.signalCode).toBe("SIGKILL");
    const deleted = [...output.matchAll(/^deleted (\S+)$/gm)].map((match) => match[1]);
    expect(deleted.length).toBeGreaterThan(10);
    expect(readdirSync(`${file}.vectors`).some((name) => name.endsWith(".usearch"))).toBe(true);

    const engine = new SqliteSearchEngine(openDatabase(file), { ownsDatabase: true, vectorIndex: { mode: "hnsw", exactBelow: 0, saveEvery: 40 } });
    try {
      const db = openDatabase(file);
      const surviving = db.prepare(`SELECT id, document_id, chunk_index FROM chunks WHERE knowledge_base_id = ?`).all(knowledgeBaseId) as {
        id: string;
        document_id: string;
        chunk_index: number;
      }[];
      db.close();
      expect(surviving.length).toBeGreaterThan(100);
      expect(surviving.filter((row) => deleted.includes(row.document_id))).toEqual([]);

      const missed: string[] = [];
      for (const row of surviving) {
        const [hit] = await engine.search(vectorQuery(knowledgeBaseId, fixtureVector(row.document_id, row.chunk_index), 1));
        if (hit?.chunk.id !== row.id) missed.push(row.id);
      }
      expect(missed).toEqual([]);

      for (const documentId of deleted) {
        const hits = await engine.search(vectorQuery(knowledgeBaseId, fixtureVector(documentId, 0), 5));
        expect(hits.filter((hit) => deleted.includes(hit.chunk.documentId))).toEqual([]);
      }
    } finally {
      await engine.close();
    }
    expect(existsSync(file)).toBe(true);
  }, 240_000);
});
