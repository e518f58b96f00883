// Backup and restore of an embedded Quarry (docs/BACKUP.md): documents are ingested, then more are
// uploaded while quarry backup runs (the server keeps writing); the Quarry is stopped and its data
// folder destroyed, the backup restored into a new folder and a Quarry started on it. Every
// document that was ready before the backup began is there, ready, with its chunks, searchable and
// re-ingestable from its kept original, with the API key made before it; a second restore onto it
// is refused, as is a folder that is no backup.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { expectReadyLogsRestored, seedReadyLogs, whileUploading } from "./backup-scenario.ts";

const BIN = resolve(process.cwd(), "bin/quarry.mjs");

function quarryCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 120_000, env: { PATH: process.env.PATH, HOME: process.env.HOME } }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

describe("backup and restore of an embedded Quarry", () => {
  const scratch: string[] = [];
  let quarry: EmbeddedQuarryFixture | undefined;
  afterAll(async () => {
    await quarry?.stop();
    for (const dir of scratch) await rm(dir, { recursive: true, force: true });
  });

  it("backs up under load; after the data folder is destroyed, the restore has every document that was ready", async () => {
    const first = await startEmbeddedQuarry();
    quarry = first;
    const { client } = first;
    const { chunksBefore, auth } = await seedReadyLogs(client);

    const backupDir = join(await mkdtemp(join(tmpdir(), "quarry-backup-")), "backup");
    scratch.push(join(backupDir, ".."));
    const backup = await whileUploading(client, auth, () => quarryCli(["backup", backupDir, "--data-dir", first.dataDir]));
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(/^backed up .* to .*: 1 knowledge bases, \d+ documents \(\d+ ready\)$/m);

    // Destroyed: the Quarry stopped and its data folder gone.
    await first.stop();
    quarry = undefined;

    const restoredDir = await mkdtemp(join(tmpdir(), "quarry-restored-"));
    scratch.push(restoredDir);
    const restore = await quarryCli(["restore", backupDir, "--data-dir", restoredDir]);
    expect(restore.code, restore.stderr).toBe(0);
    quarry = await startEmbeddedQuarry({ dataDir: restoredDir });
    await expectReadyLogsRestored(quarry.client, auth, chunksBefore);

    // A second restore onto a folder that holds a Quarry, and a folder that is no backup, are refused.
    const onto = await quarryCli(["restore", backupDir, "--data-dir", restoredDir]);
    expect(onto.code).not.toBe(0);
    expect(onto.stderr + onto.stdout).toMatch(/running|already exists/);
    const notBackup = await mkdtemp(join(tmpdir(), "quarry-not-a-backup-"));
    scratch.push(notBackup);
    await writeFile(join(notBackup, "notes.txt"), "hello");
    const wrong = await quarryCli(["restore", notBackup, "--data-dir", join(notBackup, "data")]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr + wrong.stdout).toContain("is not a Quarry backup");
  }, 300_000);
});
