// Backup and restore of a distributed Quarry (docs/BACKUP.md): every OpenSearch index under
// QUARRY_OPENSEARCH_PREFIX (catalog, chunks, keys, assistants, conversations) through OpenSearch's
// snapshot API into a shared-filesystem repository inside the backup folder, the kept originals
// copied after it, and the Kafka consumer groups' committed offsets recorded beside them. Snapshots
// are consistent per shard while Quarry serves; templates and search pipelines are cluster-wide
// state Quarry makes again at start, so only the indices (with their aliases) are taken.
import { mkdir, rm, cp, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { Client } from "@opensearch-project/opensearch";
import { Kafka, logLevel } from "kafkajs";
import { Topics } from "../lib/bus/event-bus.ts";
import { blobDir, optional, optionalUrls, type Env } from "../lib/config.ts";
import { engineConnection, openSearchClientOptions } from "../lib/engine-connection.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError } from "../lib/errors.ts";
import { copyLiveFolder, BACKUP_MANIFEST, readBackupManifest, type BackupSummary } from "./embedded-backup.ts";

const FORMAT = "quarry.distributed-backup";
const VERSION = 1;
const SNAPSHOT_FOLDER = "opensearch";

/** A consumer group's committed offsets on Quarry's topics, as Kafka reported them at backup time. */
export interface GroupOffsets {
  group: string;
  topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
}

interface Manifest extends Omit<BackupSummary, "directory"> {
  format: typeof FORMAT;
  version: number;
  createdAt: string;
  /** The index prefix the snapshot holds (QUARRY_OPENSEARCH_PREFIX). */
  prefix: string;
  snapshot: string;
  indices: string[];
  kafkaOffsets?: GroupOffsets[];
}

export function isDistributed(env: Env): boolean {
  return optional(env, "OPENSEARCH_URL") !== undefined;
}

/**
 * Snapshots the deployment env names into `directory` (new or empty; OpenSearch must be able to
 * write there: the folder must lie under its path.repo), while it serves.
 */
export async function backupDistributed(env: Env, directory: string): Promise<BackupSummary> {
  const target = resolve(directory);
  await mkdir(target, { recursive: true });
  if (existsSync(join(target, BACKUP_MANIFEST)) || existsSync(join(target, SNAPSHOT_FOLDER))) {
    throw new FailedPreconditionError(`${target} already holds a backup; name a new folder`);
  }
  const { client, prefix } = openSearchOf(env);
  try {
    const indices = await indicesUnder(client, prefix);
    if (!indices.some((index) => index === `${prefix}-catalog`)) throw new NotFoundError(`OpenSearch holds no Quarry catalog under the prefix ${prefix} (${prefix}-catalog)`);
    const repository = await registerRepository(client, prefix, join(target, SNAPSHOT_FOLDER));
    // Kafka's offsets first: every event committed by then is in the indices the snapshot takes.
    const kafkaOffsets = await recordOffsets(env);
    const snapshot = `backup-${Date.now()}`;
    const { body } = await client.snapshot.create({ repository, snapshot, wait_for_completion: true, body: { indices: indices.join(","), include_global_state: false } });
    const state = (body as { snapshot?: { state?: string; failures?: unknown[] } }).snapshot;
    if (state?.state !== "SUCCESS") throw new FailedPreconditionError(`the OpenSearch snapshot ended ${state?.state ?? "without a state"}: ${JSON.stringify(state?.failures ?? [])}`);
    // Originals after the snapshot: a document in it has its original written already.
    const blobs = blobDir(env);
    if (existsSync(blobs)) await copyLiveFolder(blobs, join(target, "blobs"));
    const counts = await catalogCounts(client, `${prefix}-catalog`);
    const manifest: Manifest = { format: FORMAT, version: VERSION, createdAt: new Date().toISOString(), prefix, snapshot, indices, ...counts, ...(kafkaOffsets ? { kafkaOffsets } : {}) };
    await writeFile(join(target, BACKUP_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    return { directory: target, ...counts };
  } finally {
    await client.close();
  }
}

/**
 * Restores a distributed backup into the OpenSearch env names (the services stopped): the indices
 * under the backup's prefix, which must not exist unless `replace` (then they are deleted first),
 * and the originals into the blob folder. Kafka's offsets stay as they are (docs/BACKUP.md).
 */
export async function restoreDistributed(env: Env, directory: string, options: { replace?: boolean } = {}): Promise<BackupSummary> {
  const target = resolve(directory);
  const manifest = await readManifest(target);
  const { client, prefix } = openSearchOf(env);
  try {
    if (prefix !== manifest.prefix) {
      throw new FailedPreconditionError(`the backup holds the indices of prefix ${manifest.prefix}, and this deployment's QUARRY_OPENSEARCH_PREFIX is ${prefix}; set it to ${manifest.prefix}`);
    }
    const present = (await indicesUnder(client, prefix)).filter((index) => manifest.indices.includes(index));
    if (present.length > 0) {
      if (!options.replace) throw new FailedPreconditionError(`OpenSearch already holds ${present.join(", ")}; restore into an empty deployment, or pass --replace to delete them first`);
      await client.indices.delete({ index: present.join(",") });
    }
    const repository = await registerRepository(client, prefix, join(target, SNAPSHOT_FOLDER));
    const { body } = await client.snapshot.restore({ repository, snapshot: manifest.snapshot, wait_for_completion: true, body: { indices: manifest.indices.join(","), include_global_state: false } });
    const shards = (body as { snapshot?: { shards?: { failed?: number } } }).snapshot?.shards;
    if (shards?.failed) throw new FailedPreconditionError(`${shards.failed} shards of the snapshot could not be restored`);
    const blobs = blobDir(env);
    if (existsSync(join(target, "blobs"))) {
      await rm(blobs, { recursive: true, force: true });
      await cp(join(target, "blobs"), blobs, { recursive: true });
    }
    return { directory: target, knowledgeBases: manifest.knowledgeBases, documents: manifest.documents, readyDocuments: manifest.readyDocuments };
  } finally {
    await client.close();
  }
}

function openSearchOf(env: Env): { client: Client; prefix: string } {
  const nodes = optionalUrls(env, "OPENSEARCH_URL");
  if (!nodes) throw new InvalidInputError("OPENSEARCH_URL is not set: a distributed backup needs the deployment's OpenSearch");
  // The deployment's own connection: every node, its credentials and CA, as the index reaches it.
  return { client: new Client(openSearchClientOptions(engineConnection(env, "OPENSEARCH", nodes))), prefix: optional(env, "QUARRY_OPENSEARCH_PREFIX") ?? "quarry" };
}

/** Every index (not alias) named `${prefix}-…`, listed by name: a wildcard delete may be refused. */
async function indicesUnder(client: Client, prefix: string): Promise<string[]> {
  const { body } = await client.cat.indices({ index: `${prefix}-*`, format: "json", h: ["index"], expand_wildcards: "all" });
  return (body as unknown as { index: string }[]).map((row) => row.index).sort();
}

/** The deployment's snapshot repository, pointed at this backup's folder. */
async function registerRepository(client: Client, prefix: string, location: string): Promise<string> {
  const repository = `${prefix}-backup`;
  try {
    await client.snapshot.createRepository({ repository, body: { type: "fs", settings: { location } } });
  } catch (error) {
    const reason = JSON.stringify((error as { meta?: { body?: unknown } }).meta?.body ?? String(error));
    if (/path\.repo/.test(reason)) {
      throw new FailedPreconditionError(
        `OpenSearch may not keep snapshots in ${location}: the folder must lie under its path.repo setting (opensearch.yml; deploy/local/engines.sh sets RUN/opensearch/snapshots), on a filesystem every node shares`,
      );
    }
    throw error;
  }
  return repository;
}

/** The committed offsets of every consumer group on Quarry's topics; undefined without Kafka. */
async function recordOffsets(env: Env): Promise<GroupOffsets[] | undefined> {
  const brokers = optional(env, "KAFKA_BROKERS");
  if (!brokers) return undefined;
  const topicPrefix = optional(env, "QUARRY_TOPIC_PREFIX") ?? "";
  const topics = Object.values(Topics).map((topic) => topicPrefix + topic);
  const admin = new Kafka({ clientId: "quarry-backup", brokers: brokers.split(","), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const ours = topics.filter((topic) => existing.has(topic));
    const { groups } = await admin.listGroups();
    const recorded: GroupOffsets[] = [];
    // Groups of `from: latest` subscribers (".latest.<uuid>") only watch; their offsets mean nothing later.
    for (const { groupId } of groups.filter((g) => g.groupId.startsWith(topicPrefix) && !g.groupId.includes(".latest."))) {
      const offsets = await admin.fetchOffsets({ groupId, topics: ours });
      const committed = offsets
        .map(({ topic, partitions }) => ({ topic, partitions: partitions.filter((p) => p.offset !== "-1").map(({ partition, offset }) => ({ partition, offset })) }))
        .filter((t) => t.partitions.length > 0);
      if (committed.length > 0) recorded.push({ group: groupId, topics: committed });
    }
    return recorded;
  } finally {
    await admin.disconnect();
  }
}

async function catalogCounts(client: Client, index: string): Promise<Omit<BackupSummary, "directory">> {
  const count = async (query: Record<string, unknown>) => (await client.count({ index, body: { query } })).body.count as number;
  return {
    knowledgeBases: await count({ term: { record_type: "knowledge_base" } }),
    documents: await count({ term: { record_type: "document" } }),
    readyDocuments: await count({ bool: { filter: [{ term: { record_type: "document" } }, { term: { status: "ready" } }] } }),
  };
}

async function readManifest(directory: string): Promise<Manifest> {
  const manifest = await readBackupManifest<Manifest>(directory, FORMAT, VERSION, "distributed backup (an embedded one restores without OPENSEARCH_URL)");
  if (!manifest.snapshot || !manifest.prefix || !Array.isArray(manifest.indices)) throw new InvalidInputError(`the backup in ${directory} names no snapshot`);
  return manifest as Manifest;
}
