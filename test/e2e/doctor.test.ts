// quarry doctor on an embedded Quarry's data folder: a healthy folder passes every check; one with
// chunks no document owns and a document stuck mid-ingest is reported, repaired (the chunks
// deleted, the document marked failed with its reason) and then passes.
import { rm } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { doctorEmbedded, STUCK_AFTER_MS, type DoctorFinding } from "../../app/embedded-doctor.ts";
import { openDatabase, SqliteSearchEngine } from "../../services/index/index.ts";
import { sqlitePath } from "../../lib/config.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

const countOf = (findings: DoctorFinding[], check: RegExp) => findings.find((f) => check.test(f.check))!.count;

describe("quarry doctor (embedded)", () => {
  let dataDir = "";
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("passes a healthy folder, reports orphaned chunks and a stuck document, repairs both", async () => {
    const quarry = await startEmbeddedQuarry();
    dataDir = quarry.dataDir;
    const { client } = quarry;
    const kb = (await client.createKnowledgeBase({ name: "checked" })).knowledgeBase!;
    const ids = [];
    for (const [file, text] of [["a.txt", "The ferry leaves at nine."], ["b.txt", "The tide turns at noon."]]) ids.push((await upload(client, "checked", file, new TextEncoder().encode(text))).document!.id);
    const log = await watchAll(client, ids);
    for (const id of ids) expect(lastUpdate(log, id).status).toBe(DocumentStatus.READY);
    await quarry.stop({ keepData: true });

    const env = { QUARRY_DATA_DIR: dataDir };
    const healthy = await doctorEmbedded(env);
    expect(healthy.filter((f) => f.count > 0), JSON.stringify(healthy)).toEqual([]);

    // Damage: chunks of a document the catalog does not have, and a document left mid-ingest.
    const db = openDatabase(sqlitePath(env));
    const engine = new SqliteSearchEngine(db, { ownsDatabase: false });
    const text = "Orphaned words nobody owns.";
    await engine.replaceDocumentChunks(kb.id, "doc_orphan", "orphan.txt", [
      { id: "orphan-0", documentId: "doc_orphan", knowledgeBaseId: kb.id, index: 0, text, tokenCount: 4, page: 0, pageEnd: 0, sectionPath: [], start: 0, end: text.length, vector: new Float32Array(kb.embeddingDimension).fill(0.1) },
    ]);
    db.prepare(`UPDATE documents SET status = 'embedding', updated_at = ? WHERE id = ?`).run(Date.now() - STUCK_AFTER_MS - 60_000, ids[1]);
    await engine.close();
    db.close();

    const sick = await doctorEmbedded(env);
    expect(countOf(sick, /^chunks no catalog document owns/)).toBe(1);
    expect(countOf(sick, /^documents stuck/)).toBe(1);
    const repaired = await doctorEmbedded(env, { repair: true });
    expect(repaired.find((f) => /^chunks no catalog/.test(f.check))?.repaired).toBe("deleted 1 chunk(s)");
    expect(repaired.find((f) => /^documents stuck/.test(f.check))?.repaired).toBe("marked 1 failed with the reason");
    const after = await doctorEmbedded(env);
    expect(after.filter((f) => f.count > 0), JSON.stringify(after)).toEqual([]);

    const again = await startEmbeddedQuarry({ dataDir });
    try {
      const doc = (await again.client.getDocument({ documentId: ids[1] })).document!;
      expect(doc.status).toBe(DocumentStatus.FAILED);
      expect(doc.errorMessage).toMatch(/stuck in embedding since .*re-ingest it/);
    } finally {
      await again.stop({ keepData: true });
    }
  }, 180_000);
});
