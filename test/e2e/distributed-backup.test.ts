// Backup and restore of a Quarry on OpenSearch (docs/BACKUP.md, distributed): documents are ingested,
// then more are uploaded while `quarry backup` snapshots the indices; the Quarry is stopped, every
// index under its prefix deleted and its data folder dropped; `quarry restore` brings the snapshot and
// the originals back and a Quarry started on a new data folder has every document that was ready
// before the backup began, ready with its chunks, searchable and re-ingestable, and the key made
// before it. With Kafka (KAFKA_BROKERS) the Quarry's bus is Kafka and the backup records its
// consumer groups' offsets. OpenSearch must allow snapshots (path.repo, which engines.sh sets).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, expect, it } from "vitest";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { expectReadyLogsRestored, seedReadyLogs, whileUploading } from "./backup-scenario.ts";

const BIN = resolve(process.cwd(), "bin/quarry.mjs");
const OPENSEARCH_URL = process.env.OPENSEARCH_URL?.trim() || undefined;
const KAFKA_BROKERS = process.env.KAFKA_BROKERS?.trim() || undefined;

/** The first folder OpenSearch may keep filesystem snapshots in (its path.repo), if any. */
async function snapshotFolder(url: string): Promise<string | undefined> {
  const response = await fetch(`${url}/_nodes/settings?filter_path=nodes.*.settings.path.repo`);
  const body = (await response.json()) as { nodes?: Record<string, { settings?: { path?: { repo?: string | string[] } } }> };
  const repo = Object.values(body.nodes ?? {})[0]?.settings?.path?.repo;
  return Array.isArray(repo) ? repo[0] : repo;
}

const repoFolder = OPENSEARCH_URL ? await snapshotFolder(OPENSEARCH_URL) : undefined;

function quarryCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 300_000, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

describeWith(
  {
    value: repoFolder,
    requiredBy: "QUARRY_REQUIRE_ENGINES",
    missing: OPENSEARCH_URL ? `OpenSearch at ${OPENSEARCH_URL} allows no snapshots (no path.repo)` : "OPENSEARCH_URL is not set",
    hint: "Start OpenSearch with deploy/local/engines.sh up (its opensearch.yml sets path.repo)",
  },
  "backup and restore of a Quarry on OpenSearch",
  (repo) => {
    const run = randomBytes(4).toString("hex");
    const prefix = `quarry-dbk-${run}`;
    const url = OPENSEARCH_URL!;
    const env: Record<string, string> = {
      OPENSEARCH_URL: url,
      QUARRY_OPENSEARCH_PREFIX: prefix,
      ...(KAFKA_BROKERS ? { KAFKA_BROKERS, QUARRY_TOPIC_PREFIX: `${prefix}.` } : {}),
    };
    const backupRoot = join(repo, `quarry-test-${run}`);
    const scratch: string[] = [backupRoot];
    let quarry: EmbeddedQuarryFixture | undefined;

    afterAll(async () => {
      await quarry?.stop();
      await deleteOpenSearchNamespace(url, `${prefix}-`);
      await fetch(`${url}/_snapshot/${prefix}-backup`, { method: "DELETE" });
      for (const dir of scratch) await rm(dir, { recursive: true, force: true });
    });

    it("backs up under load; after the indices are deleted, the restore has every document that was ready", async () => {
      const first = await startEmbeddedQuarry({ env });
      quarry = first;
      const { client } = first;
      const { chunksBefore, auth } = await seedReadyLogs(client);

      // Load: uploads keep arriving while OpenSearch takes the snapshot.
      const backupDir = join(backupRoot, "backup");
      await mkdir(backupRoot, { recursive: true });
      const backup = await whileUploading(client, auth, () => quarryCli(["backup", backupDir], { ...env, QUARRY_DATA_DIR: first.dataDir }));
      expect(backup.code, backup.stderr).toBe(0);
      expect(backup.stdout).toMatch(/^backed up OpenSearch to .*: 1 knowledge bases, \d+ documents \(\d+ ready\)$/m);
      const manifest = JSON.parse(await readFile(join(backupDir, "quarry-backup.json"), "utf8")) as { indices: string[]; kafkaOffsets?: { group: string }[] };
      expect(manifest.indices).toContain(`${prefix}-catalog`);
      if (KAFKA_BROKERS) expect(manifest.kafkaOffsets?.length, "committed offsets of the Quarry's consumer groups").toBeGreaterThan(0);

      // Destroyed: the Quarry stopped, its data folder (the originals) gone, every index deleted.
      await first.stop();
      quarry = undefined;
      await deleteOpenSearchNamespace(url, `${prefix}-`);

      const second = join(backupRoot, "restored-data");
      const restore = await quarryCli(["restore", backupDir], { ...env, QUARRY_DATA_DIR: second });
      expect(restore.code, restore.stderr).toBe(0);
      quarry = await startEmbeddedQuarry({ env, dataDir: second });
      await expectReadyLogsRestored(quarry.client, auth, chunksBefore);

      // Restoring over the live indices is refused unless asked to replace them.
      const onto = await quarryCli(["restore", backupDir], { ...env, QUARRY_DATA_DIR: second });
      expect(onto.code).not.toBe(0);
      expect(onto.stderr + onto.stdout).toMatch(/already holds .*--replace/);
    }, 600_000);
  },
);
