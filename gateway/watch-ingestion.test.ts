import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteEventBus } from "../lib/bus/sqlite-event-bus.ts";
import { Topics } from "../lib/bus/event-bus.ts";
import type { DocumentRecord, DocumentStatus } from "../lib/domain.ts";
import { ProgressHub } from "../lib/pipeline/progress-hub.ts";
import { publishProgress } from "../lib/pipeline/progress.ts";
import { watchIngestion, type WatchUpdate } from "./watch-ingestion.ts";

function record(id: string, status: DocumentStatus, version = 1, percent = 0): DocumentRecord {
  const now = new Date();
  return {
    id, knowledgeBaseId: "kb", fileName: `${id}.txt`, mimeType: "text/plain", sizeBytes: 1, contentHash: "h", version,
    status, progressPercent: percent, chunkCount: 0, tokenCount: 0, errorMessage: "", enabled: true, metadata: {}, createdAt: now, updatedAt: now,
  };
}

let dir: string;
let bus: SqliteEventBus;
let hub: ProgressHub;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "quarry-watch-"));
  bus = new SqliteEventBus(join(dir, "bus.db"));
  await bus.ensureTopics([Topics.ingestionProgress]);
  hub = new ProgressHub(bus);
  await hub.start();
});
afterEach(async () => {
  await hub.close();
  await bus.close();
  rmSync(dir, { recursive: true, force: true });
});

async function collect(gen: AsyncGenerator<WatchUpdate>, onFirst?: () => Promise<void>): Promise<WatchUpdate[]> {
  const out: WatchUpdate[] = [];
  for await (const u of gen) {
    out.push(u);
    if (out.length === 1 && onFirst) await onFirst();
  }
  return out;
}

describe("watchIngestion", () => {
  it("streams the snapshot, then live progress, and ends when every document is ready or failed", async () => {
    const a = { documentId: "a", knowledgeBaseId: "kb", version: 1 };
    const updates = await collect(
      watchIngestion({ hub, snapshot: async () => [record("a", "pending"), record("b", "ready", 1, 100)], followNew: false }),
      async () => {
        await publishProgress(bus, a, { phase: "parsing", percent: 10 });
        await publishProgress(bus, { ...a, version: 0 }, { phase: "failed", percent: 0, error: "an older version" });
        await publishProgress(bus, a, { phase: "embedding", percent: 60 });
        await publishProgress(bus, a, { phase: "ready", percent: 100, chunkCount: 3 });
      },
    );
    expect(updates.map((u) => `${u.documentId}:${u.status}:${u.percent}`)).toEqual(["a:pending:0", "b:ready:100", "a:parsing:10", "a:embedding:60", "a:ready:100"]);
    expect(updates.at(-1)?.chunkCount).toBe(3);
  });

  it("finishes from the catalog alone when progress events were missed", async () => {
    let calls = 0;
    const snapshot = async () => [calls++ === 0 ? record("a", "embedding", 1, 50) : record("a", "failed", 1, 0)];
    const updates = await collect(watchIngestion({ hub, snapshot, followNew: false, resnapshotMs: 50 }));
    expect(updates.map((u) => u.status)).toEqual(["embedding", "failed"]);
  });

  it("never goes back when a live event arrives behind what the catalog's re-read showed", async () => {
    const a = { documentId: "a", knowledgeBaseId: "kb", version: 1 };
    let calls = 0;
    const snapshot = async () => {
      if (calls++ === 0) return [record("a", "embedding", 1, 40)];
      // The re-read finds the index's INDEXING row while the embedder's last event is still on its way.
      if (calls === 2) {
        await publishProgress(bus, a, { phase: "embedding", percent: 90 });
        await publishProgress(bus, a, { phase: "indexing", percent: 95 });
        await publishProgress(bus, a, { phase: "ready", percent: 100, chunkCount: 2 });
      }
      return [record("a", "indexing", 1, 95)];
    };
    const updates = await collect(watchIngestion({ hub, snapshot, followNew: false, resnapshotMs: 0 }));
    expect(updates.map((u) => `${u.status}:${u.percent}`)).toEqual(["embedding:40", "indexing:95", "ready:100"]);
  });

  it("ends at once when nothing is in flight", async () => {
    const updates = await collect(watchIngestion({ hub, snapshot: async () => [record("a", "ready", 1, 100)], followNew: false }));
    expect(updates).toHaveLength(1);
  });
});
