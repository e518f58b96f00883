// `quarry backup DIR` and `quarry restore DIR`: an embedded Quarry's data folder, backed up while it
// serves (SQLite's online backup, and the originals) and put back while it is stopped (docs/BACKUP.md);
// `quarry doctor [--repair]`: its consistency checked, and what is safe repaired.
import type { Command } from "commander";
import { backupEmbedded, restoreEmbedded } from "../app/embedded-backup.ts";
import { backupDistributed, isDistributed, restoreDistributed } from "../app/distributed-backup.ts";
import { doctorDistributed, isDistributedIndex } from "../app/distributed-doctor.ts";
import { doctorEmbedded } from "../app/embedded-doctor.ts";
import { dataDir } from "../lib/config.ts";

export function registerBackupCommands(program: Command): void {
  program
    .command("backup")
    .description("back up a Quarry (every base, key, assistant and conversation, and the originals) into a new folder, while it serves; with OPENSEARCH_URL set, the distributed one (an OpenSearch snapshot: the folder must lie under its path.repo)")
    .argument("<dir>", "a new or empty folder for the backup")
    .option("--data-dir <dir>", "the Quarry's data folder (default: QUARRY_DATA_DIR, or .quarry)")
    .action(async (dir: string, o: { dataDir?: string }) => {
      const env = { ...process.env, ...(o.dataDir ? { QUARRY_DATA_DIR: o.dataDir } : {}) };
      const summary = isDistributed(env) ? await backupDistributed(env, dir) : await backupEmbedded(env, dir);
      process.stdout.write(`backed up ${isDistributed(env) ? "OpenSearch" : dataDir(env)} to ${dir}: ${summary.knowledgeBases} knowledge bases, ${summary.documents} documents (${summary.readyDocuments} ready)\n`);
    });
  program
    .command("restore")
    .description("put a backup in place as an embedded Quarry's data folder, or with OPENSEARCH_URL set into OpenSearch and the blob folder (stop Quarry first)")
    .argument("<dir>", "a folder quarry backup wrote")
    .option("--data-dir <dir>", "the data folder to restore into (default: QUARRY_DATA_DIR, or .quarry)")
    .option("--replace", "overwrite the Quarry already there (the data folder, or the indices under the prefix)")
    .action(async (dir: string, o: { dataDir?: string; replace?: boolean }) => {
      const env = { ...process.env, ...(o.dataDir ? { QUARRY_DATA_DIR: o.dataDir } : {}) };
      const summary = isDistributed(env) ? await restoreDistributed(env, dir, { replace: o.replace }) : await restoreEmbedded(env, dir, { replace: o.replace });
      process.stdout.write(`restored ${dir} into ${isDistributed(env) ? "OpenSearch" : dataDir(env)}: ${summary.knowledgeBases} knowledge bases, ${summary.documents} documents (${summary.readyDocuments} ready)\n`);
    });
}

export function registerDoctorCommand(program: Command): void {
  program
    .command("doctor")
    .description("check a Quarry's consistency (catalog, chunks, vectors, keyword index, originals, stuck documents, dead letters): the embedded one's data folder, or with OPENSEARCH_URL / ELASTICSEARCH_URL set the distributed one; --repair fixes what is safe")
    .option("--data-dir <dir>", "the Quarry's data folder (default: QUARRY_DATA_DIR, or .quarry)")
    .option("--repair", "delete chunks no document owns and mark documents stuck mid-ingest failed (embedded: stop Quarry first)")
    .action(async (o: { dataDir?: string; repair?: boolean }) => {
      const env = { ...process.env, ...(o.dataDir ? { QUARRY_DATA_DIR: o.dataDir } : {}) };
      const findings = isDistributedIndex(env) ? await doctorDistributed(env, { repair: o.repair }) : await doctorEmbedded(env, { repair: o.repair });
      for (const f of findings) {
        process.stdout.write(`${f.count === 0 ? "ok  " : "FIX "} ${f.check}: ${f.count}${f.detail ? ` (${f.detail})` : ""}${f.repaired ? ` — ${f.repaired}` : ""}\n`);
      }
      const open = findings.filter((f) => f.count > 0 && !f.repaired).length;
      if (open > 0) process.exitCode = 1;
    });
}
