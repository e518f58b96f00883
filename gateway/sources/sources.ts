// Sources on a knowledge base (the application layer): add, list with status, sync now, remove,
// and what the schedule finds due. The index stores sources and cursors as given; this module
// checks settings, keeps two syncs of one source from running at once, and records each sync's
// state and counts on the source (its last_sync), and serves a running sync's progress to watchers
// and listings. A stored secret (an S3 source's) is used by syncs and never handed back.
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { SourceSchema, SourceSyncSchema, SourceSyncState, type Source, type SourceSync } from "../../gen/quarry/common/v1/source_pb.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError } from "../../lib/errors.ts";
import type { HeldLease, Leases } from "../../lib/leases/leases.ts";
import type { Logger } from "../../lib/logger.ts";
import { checkFolderSettings, FolderLister } from "./folder-lister.ts";
import type { SourceLister } from "./lister.ts";
import { LiveSync } from "./live-sync.ts";
import { checkS3Settings, S3Lister } from "./s3-lister.ts";
import { syncSource, type SyncCounts, type SyncPorts } from "./source-sync.ts";
import { checkWebsiteSettings, WebsiteLister } from "./website-lister.ts";

/** The index's source records. */
export interface SourceRecords {
  save(source: Source): Promise<Source>;
  list(knowledgeBaseId?: string): Promise<Source[]>;
  delete(sourceId: string): Promise<void>;
}

export interface SourcesDeps {
  records: SourceRecords;
  resolveKnowledgeBase(idOrName: string): Promise<{ id: string }>;
  /** The cursor and the upload path for one source. */
  portsFor(source: Source): SyncPorts;
  logger?: Logger;
  now?: () => Date;
}

export function listerFor(source: Source): SourceLister {
  switch (source.kind.case) {
    case "folder":
      return new FolderLister(source.kind.value);
    case "website":
      return new WebsiteLister(source.kind.value);
    case "s3":
      return new S3Lister(source.kind.value);
    default:
      throw new InvalidInputError(NEEDS_KIND);
  }
}

const NEEDS_KIND = "a source needs a kind: a folder, an S3 bucket or a website";

function checkSettings(source: Source): void {
  if (!source.name.trim()) throw new InvalidInputError("a source needs a name");
  if (source.kind.case === "folder") checkFolderSettings(source.kind.value);
  else if (source.kind.case === "website") checkWebsiteSettings(source.kind.value);
  else if (source.kind.case === "s3") checkS3Settings(source.kind.value);
  else throw new InvalidInputError(NEEDS_KIND);
}

/** The source as callers see it: an S3 source's secret blanked, and whether one is stored said instead. */
export function withoutSecrets(source: Source): Source {
  if (source.kind.case !== "s3") return source;
  const s3 = source.kind.value;
  return { ...source, kind: { case: "s3", value: { ...s3, secretAccessKey: "", secretAccessKeySet: s3.secretAccessKey !== "" } } };
}

/** The lease a sync holds, in the engine every gateway shares: one sync of a source at a time across them. */
export const syncLeaseName = (sourceId: string) => `source-sync:${sourceId}`;

export class Sources {
  // One process's guard: two syncs of one source never overlap here; across gateway replicas the
  // source's lease (useLeases) keeps a second gateway from starting one.
  private readonly running = new Set<string>();
  private leases: Leases | undefined;
  /** The running syncs' progress, by source id. */
  private readonly live = new Map<string, LiveSync>();
  private readonly now: () => Date;

  constructor(private readonly deps: SourcesDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** From now on each sync holds its source's lease (the gateway opens the leases with its workers). */
  useLeases(leases: Leases): void {
    this.leases = leases;
  }

  /**
   * Marks failed each sync recorded as running that no gateway runs (its lease is free): the
   * process running it stopped (a crash, a kill -9). Its next sync resumes from the cursor, which
   * was written per item.
   */
  async recoverInterrupted(): Promise<Source[]> {
    const recovered: Source[] = [];
    for (const source of await this.deps.records.list()) {
      if (source.lastSync?.state !== SourceSyncState.RUNNING || this.running.has(source.id)) continue;
      const lease = await this.leases?.tryAcquire(syncLeaseName(source.id));
      if (this.leases && !lease) continue;
      try {
        const interrupted = create(SourceSyncSchema, {
          ...source.lastSync,
          state: SourceSyncState.FAILED,
          finishedAt: timestampFromDate(this.now()),
          error: "interrupted: the gateway running this sync stopped before it finished; the next sync goes on from what was recorded",
        });
        recovered.push(await this.deps.records.save({ ...source, lastSync: interrupted }));
      } finally {
        await lease?.release();
      }
    }
    return recovered;
  }

  async add(knowledgeBase: string, given: Source): Promise<Source> {
    checkSettings(given);
    const kb = await this.deps.resolveKnowledgeBase(knowledgeBase);
    const source = create(SourceSchema, {
      ...given,
      ...(given.kind.case === "s3" ? { kind: { case: "s3" as const, value: { ...given.kind.value, secretAccessKeySet: false } } } : {}),
      id: `src_${randomBytes(8).toString("hex")}`,
      knowledgeBaseId: kb.id,
      name: given.name.trim(),
      createdAt: timestampFromDate(this.now()),
      lastSync: undefined,
      nextSyncAt: undefined,
    });
    return withoutSecrets(this.withSchedule(await this.deps.records.save(source)));
  }

  /** Each source with its last sync, or the running one's counts so far. */
  async list(knowledgeBase: string): Promise<Source[]> {
    const kb = await this.deps.resolveKnowledgeBase(knowledgeBase);
    return (await this.deps.records.list(kb.id)).map((s) => withoutSecrets(this.withSchedule(this.withLiveSync(s))));
  }

  /** By id or name within the base: a source of another base reads as missing. */
  async find(knowledgeBase: string, idOrName: string): Promise<Source> {
    const kb = await this.deps.resolveKnowledgeBase(knowledgeBase);
    const sources = await this.deps.records.list(kb.id);
    const found = sources.find((s) => s.id === idOrName) ?? sources.find((s) => s.name === idOrName);
    if (!found) throw new NotFoundError(`the knowledge base ${knowledgeBase} has no source ${idOrName}`);
    return found;
  }

  async sync(knowledgeBase: string, idOrName: string): Promise<Source> {
    return withoutSecrets(await this.run(await this.find(knowledgeBase, idOrName)));
  }

  /**
   * The source's running sync as it changes, ending with its outcome; with none running in this
   * process, its last sync (nothing before the first).
   */
  async *watch(knowledgeBase: string, idOrName: string, signal?: AbortSignal): AsyncIterable<SourceSync> {
    const source = await this.find(knowledgeBase, idOrName);
    const live = this.live.get(source.id);
    if (live) yield* live.watch(signal);
    else if (source.lastSync) yield source.lastSync;
  }

  async remove(knowledgeBase: string, idOrName: string, options: { deleteDocuments: boolean }): Promise<void> {
    const source = await this.find(knowledgeBase, idOrName);
    if (this.running.has(source.id)) throw new FailedPreconditionError(`the source ${source.name} is syncing; remove it when the sync is done`);
    this.running.add(source.id);
    try {
      if (options.deleteDocuments) {
        const ports = this.deps.portsFor(source);
        for (const item of await ports.cursor()) await ports.deleteDocument(item.documentId);
      }
      await this.deps.records.delete(source.id);
    } finally {
      this.running.delete(source.id);
    }
  }

  /** Every scheduled source whose next run has come and which is not syncing now. */
  async due(): Promise<Source[]> {
    const now = this.now().getTime();
    return (await this.deps.records.list())
      .map((s) => this.withSchedule(s))
      .filter((s) => s.nextSyncAt && timestampDate(s.nextSyncAt).getTime() <= now && !this.running.has(s.id));
  }

  /** Runs one sync, recording it as running and then its outcome; refuses a second at once. */
  async run(source: Source): Promise<Source> {
    if (this.running.has(source.id)) throw new FailedPreconditionError(`a sync of the source ${source.name} is already running`);
    const lease: HeldLease | undefined = await this.leases?.tryAcquire(syncLeaseName(source.id));
    if (this.leases && !lease) throw new FailedPreconditionError(
        `a sync of the source ${source.name} is already running in another gateway (or the gateway running it stopped, and its lease has not lapsed yet: sync again in a few seconds)`,
      );
    try {
      return await this.runHolding(source, lease);
    } finally {
      await lease?.release();
    }
  }

  private async runHolding(source: Source, lease: HeldLease | undefined): Promise<Source> {
    const startedAt = timestampFromDate(this.now());
    const running = create(SourceSyncSchema, { state: SourceSyncState.RUNNING, startedAt });
    const live = new LiveSync(running);
    this.running.add(source.id);
    this.live.set(source.id, live);
    let outcome = running;
    try {
      await this.deps.records.save({ ...source, lastSync: running, nextSyncAt: undefined });
      let last: SyncCounts | undefined;
      try {
        const progress = (counts: SyncCounts) => {
          // A sync whose lease was lost (another gateway may take it over) stops at its next item.
          lease?.assertOwned();
          last = counts;
          live.update(create(SourceSyncSchema, { ...counts, state: SourceSyncState.RUNNING, startedAt }));
        };
        const counts = await syncSource({ sourceId: source.id, knowledgeBaseId: source.knowledgeBaseId, tags: { ...source.tags } }, listerFor(source), this.deps.portsFor(source), progress);
        outcome = create(SourceSyncSchema, { ...counts, state: SourceSyncState.DONE, startedAt, finishedAt: timestampFromDate(this.now()) });
      } catch (error) {
        this.deps.logger?.warn({ err: error, source: source.id }, "a source's sync failed");
        // What it did before it failed stays counted.
        outcome = create(SourceSyncSchema, { ...last, state: SourceSyncState.FAILED, startedAt, finishedAt: timestampFromDate(this.now()), error: (error as Error).message });
      }
      return this.withSchedule(await this.deps.records.save({ ...source, lastSync: outcome, nextSyncAt: undefined }));
    } finally {
      live.end(outcome);
      this.live.delete(source.id);
      this.running.delete(source.id);
    }
  }

  private withLiveSync(source: Source): Source {
    const live = this.live.get(source.id);
    return live ? { ...source, lastSync: live.state } : source;
  }

  /** next_sync_at: the last sync's start (or the source's creation) plus the interval. */
  private withSchedule(source: Source): Source {
    if (!source.intervalSeconds) return { ...source, nextSyncAt: undefined };
    const from = source.lastSync?.startedAt ?? source.createdAt;
    const base = from ? timestampDate(from).getTime() : this.now().getTime();
    return { ...source, nextSyncAt: timestampFromDate(new Date(base + source.intervalSeconds * 1000)) };
  }
}
