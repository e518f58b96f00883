// Across gateways, one sync of a source at a time: each holds the source's lease in the store the
// replicas share (here SQLite, as embedded; the same contract runs on OpenSearch and Elasticsearch in
// lib/leases); and a sync left "running" by a gateway that died is marked interrupted at the next start.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FolderSourceSchema, SourceSchema, SourceSyncSchema, SourceSyncState, type Source } from "../../gen/quarry/common/v1/source_pb.ts";
import { Leases } from "../../lib/leases/leases.ts";
import { SqliteLeaseStore } from "../../lib/leases/sqlite-lease-store.ts";
import { silentLogger } from "../../lib/logger.ts";
import type { CursorItem, SyncPorts } from "./source-sync.ts";
import { Sources, type SourceRecords } from "./sources.ts";

let dir: string;
let store: SqliteLeaseStore;
const leases: Leases[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "quarry-source-lease-"));
  await writeFile(join(dir, "a.txt"), "Alpha.");
  await writeFile(join(dir, "b.txt"), "Bravo.");
  store = new SqliteLeaseStore(join(dir, "leases.sqlite"));
});
afterEach(async () => {
  for (const l of leases.splice(0)) await l.close();
  await rm(dir, { recursive: true, force: true });
});

/** The index's records, as the gateways share them through the index service. */
function sharedRecords(): SourceRecords {
  const rows = new Map<string, Source>();
  return {
    save: async (s) => (rows.set(s.id, s), s),
    list: async (kb) => [...rows.values()].filter((s) => !kb || s.knowledgeBaseId === kb),
    delete: async (id) => void rows.delete(id),
  };
}

/** Ports whose uploads wait for `open()`, so a sync can be held mid-way. */
function heldPorts() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let firstSubmit!: () => void;
  const submitting = new Promise<void>((resolve) => (firstSubmit = resolve));
  const cursor: CursorItem[] = [];
  const ports: SyncPorts = {
    cursor: async () => cursor,
    record: async (item) => void cursor.push(item),
    forget: async () => {},
    submit: async (input) => {
      firstSubmit();
      await opened;
      return { documentId: `doc-${input.fileName}`, unchanged: false };
    },
    deleteDocument: async () => {},
    setMetadata: async () => {},
  };
  return { ports, open, submitting };
}

function gateway(records: SourceRecords, ports: SyncPorts): Sources {
  const sources = new Sources({ records, resolveKnowledgeBase: async (id) => ({ id }), portsFor: () => ports, logger: silentLogger });
  const l = new Leases(store, { logger: silentLogger, ttlMs: 5_000 });
  leases.push(l);
  sources.useLeases(l);
  return sources;
}

describe("source syncs across gateways", () => {
  it("refuses a second gateway's sync of a source while one runs, and allows it after", async () => {
    const records = sharedRecords();
    const held = heldPorts();
    const first = gateway(records, held.ports);
    const second = gateway(records, held.ports);
    const source = await first.add("kb", create(SourceSchema, { name: "notes", kind: { case: "folder", value: create(FolderSourceSchema, { path: dir, include: ["*.txt"] }) } }));

    const running = first.sync("kb", "notes");
    await held.submitting;
    await expect(second.sync("kb", source.id)).rejects.toThrow(/already running in another gateway/);
    held.open();
    expect((await running).lastSync).toMatchObject({ state: SourceSyncState.DONE, added: 2 });
    expect((await second.sync("kb", "notes")).lastSync).toMatchObject({ state: SourceSyncState.DONE, unchanged: 2 });
  });

  it("marks a sync left running by a stopped gateway interrupted, but not one another gateway runs", async () => {
    const records = sharedRecords();
    const held = heldPorts();
    const running = create(SourceSyncSchema, { state: SourceSyncState.RUNNING, startedAt: timestampFromDate(new Date()), submitted: 1 });
    const orphan = await records.save(create(SourceSchema, { id: "src_orphan", knowledgeBaseId: "kb", name: "orphan", lastSync: running }));
    const live = gateway(records, held.ports);
    const source = await live.add("kb", create(SourceSchema, { name: "live", kind: { case: "folder", value: create(FolderSourceSchema, { path: dir, include: ["*.txt"] }) } }));
    const sync = live.sync("kb", source.id);
    await held.submitting;

    const restarted = gateway(records, held.ports);
    const recovered = await restarted.recoverInterrupted();
    expect(recovered.map((s) => s.id)).toEqual([orphan.id]);
    const [after] = await records.list("kb").then((all) => all.filter((s) => s.id === orphan.id));
    expect(after.lastSync).toMatchObject({ state: SourceSyncState.FAILED, submitted: 1 });
    expect(after.lastSync?.error).toMatch(/^interrupted/);
    held.open();
    await sync;
  });
});
