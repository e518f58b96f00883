// Backup and restore of an embedded Quarry's data folder: its one SQLite file (catalog, chunks,
// vectors, keys, assistants, conversations and the event log) copied with SQLite's online backup —
// a consistent snapshot while the server keeps writing — and the kept originals beside it.
// docs/BACKUP.md says how to use it and what the distributed path is.
import { copyFile, cp, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import Database from "better-sqlite3";
import { blobDir, sqlitePath, type Env } from "../lib/config.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError } from "../lib/errors.ts";

export const BACKUP_MANIFEST = "quarry-backup.json";
const MANIFEST = BACKUP_MANIFEST;
const FORMAT = "quarry.embedded-backup";
const VERSION = 1;

export interface BackupSummary {
  directory: string;
  knowledgeBases: number;
  documents: number;
  readyDocuments: number;
}

interface Manifest extends Omit<BackupSummary, "directory"> {
  format: typeof FORMAT;
  version: number;
  createdAt: string;
}

/** Copies the data folder of the Quarry that env names into `directory` (new or empty), while it serves. */
export async function backupEmbedded(env: Env, directory: string): Promise<BackupSummary> {
  const source = sqlitePath(env);
  if (!existsSync(source)) throw new NotFoundError(`there is no embedded Quarry at ${source}`);
  await mkdir(directory, { recursive: true });
  if (existsSync(join(directory, MANIFEST)) || existsSync(join(directory, "quarry.db"))) {
    throw new FailedPreconditionError(`${directory} already holds a backup; name a new folder`);
  }
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    // The online backup copies pages and starts over when another connection writes meanwhile, so
    // the copy is one consistent state: every document ready before it began is in it.
    await db.backup(join(directory, "quarry.db"));
  } finally {
    db.close();
  }
  // Originals after the database: a document in the copy has its original written already (the
  // gateway keeps it before it registers the document); newer ones are harmless extras.
  const blobs = blobDir(env);
  if (existsSync(blobs)) await copyLiveFolder(blobs, join(directory, "blobs"));
  const counts = countsOf(join(directory, "quarry.db"));
  const manifest: Manifest = { format: FORMAT, version: VERSION, createdAt: new Date().toISOString(), ...counts };
  await writeFile(join(directory, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return { directory, ...counts };
}

/**
 * Copies a folder that uploads and deletes keep changing. A name starting with "." is an original
 * still being written (gateway/originals.ts writes it so, then renames it): not one to keep. A file
 * gone between the listing and its copy was a document deleted meanwhile: nothing to keep either.
 */
export async function copyLiveFolder(from: string, to: string): Promise<void> {
  for (const entry of await readdir(from, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.startsWith(".")) continue;
    const source = join(entry.parentPath, entry.name);
    const target = join(to, relative(from, source));
    await mkdir(dirname(target), { recursive: true });
    await copyFile(source, target).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }
}

/**
 * Puts a backup in place as the data folder env names; Quarry must be stopped. Refuses a folder
 * that already holds a Quarry unless `replace`, and a backup that is not whole.
 */
export async function restoreEmbedded(env: Env, directory: string, options: { replace?: boolean } = {}): Promise<BackupSummary> {
  const manifest = await readManifest(directory);
  const backupFile = join(directory, "quarry.db");
  checkIntegrity(backupFile);
  const target = sqlitePath(env);
  if (existsSync(`${target}-wal`)) throw new FailedPreconditionError(`${target}-wal exists: a Quarry seems to be running on this data folder; stop it first`);
  if (existsSync(target) && !options.replace) throw new FailedPreconditionError(`${target} already exists; restore into an empty data folder, or pass --replace to overwrite it`);
  await rm(target, { force: true });
  await rm(`${target}-shm`, { force: true });
  await mkdir(join(target, ".."), { recursive: true });
  await cp(backupFile, target);
  const blobs = blobDir(env);
  if (existsSync(join(directory, "blobs"))) {
    await rm(blobs, { recursive: true, force: true });
    await cp(join(directory, "blobs"), blobs, { recursive: true });
  }
  return { directory, knowledgeBases: manifest.knowledgeBases, documents: manifest.documents, readyDocuments: manifest.readyDocuments };
}

/**
 * A backup folder's manifest when it is of `format` and a version this Quarry restores (`version` or
 * older); InvalidInputError naming what is wrong otherwise (`otherKind` says what restores the rest).
 */
export async function readBackupManifest<M extends { format: string; version: number }>(directory: string, format: string, version: number, otherKind: string): Promise<Partial<M>> {
  let text: string;
  try {
    text = await readFile(join(directory, MANIFEST), "utf8");
  } catch {
    throw new InvalidInputError(`${directory} is not a Quarry backup (it has no ${MANIFEST})`);
  }
  const manifest = JSON.parse(text) as Partial<M>;
  if (manifest.format !== format) throw new InvalidInputError(`${directory} is not a Quarry ${otherKind}`);
  if ((manifest.version ?? Infinity) > version) throw new InvalidInputError(`the backup is of version ${manifest.version}, newer than this Quarry restores (${version})`);
  return manifest;
}

async function readManifest(directory: string): Promise<Manifest> {
  const manifest = await readBackupManifest<Manifest>(directory, FORMAT, VERSION, "embedded backup (a distributed one restores with OPENSEARCH_URL set)");
  await stat(join(directory, "quarry.db")).catch(() => {
    throw new InvalidInputError(`the backup in ${directory} has no quarry.db`);
  });
  return manifest as Manifest;
}

function checkIntegrity(file: string): void {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const result = db.pragma("quick_check", { simple: true });
    if (result !== "ok") throw new InvalidInputError(`the backup's database is damaged (${String(result)}); use another backup`);
  } finally {
    db.close();
  }
}

function countsOf(file: string): Omit<BackupSummary, "directory"> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const row = db
      .prepare(
        `SELECT (SELECT COUNT(*) FROM knowledge_bases) AS knowledgeBases, (SELECT COUNT(*) FROM documents) AS documents,
                (SELECT COUNT(*) FROM documents WHERE status = 'ready') AS readyDocuments`,
      )
      .get() as Omit<BackupSummary, "directory">;
    return row;
  } finally {
    db.close();
  }
}
