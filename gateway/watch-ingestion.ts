// WatchIngestion as a plain async generator: a snapshot from the catalog, then live progress from
// the hub, until every watched document is ready or failed. The catalog is asked again every few
// seconds as well, so an event missed while a Kafka consumer was still joining cannot leave a
// watcher hanging. Ended by the server's shutdown before they finish, it fails with UNAVAILABLE.
import type { DocumentRecord, DocumentStatus } from "../lib/domain.ts";
import { UnavailableError } from "../lib/errors.ts";
import type { ProgressEvent, ProgressHub } from "../lib/pipeline/progress-hub.ts";

export interface WatchUpdate {
  documentId: string;
  fileName: string;
  status: DocumentStatus;
  percent: number;
  message: string;
  error: string;
  chunkCount: number;
}

export interface WatchSource {
  hub: ProgressHub;
  /** The documents to watch now: the named ones, or all of the knowledge base. */
  snapshot(): Promise<DocumentRecord[]>;
  /** Whether documents that appear later in the knowledge base join the watch. */
  followNew: boolean;
  knowledgeBaseId?: string;
  resnapshotMs?: number;
  signal?: AbortSignal;
}

const terminal = (s: DocumentStatus) => s === "ready" || s === "failed";

const PHASE_ORDER: Record<DocumentStatus, number> = { pending: 0, parsing: 1, chunking: 2, embedding: 3, indexing: 4, ready: 5, failed: 5 };

/** Whether a status of the same version is news to a watcher that has seen `seen`. */
function isAhead(status: DocumentStatus, percent: number, seen: { status: DocumentStatus; percent: number }): boolean {
  if (seen.status === "failed" && status !== "failed") return true; // a retry moved it on
  if (PHASE_ORDER[status] !== PHASE_ORDER[seen.status]) return PHASE_ORDER[status] > PHASE_ORDER[seen.status];
  return status !== seen.status || percent > seen.percent;
}

export async function* watchIngestion(source: WatchSource): AsyncGenerator<WatchUpdate> {
  const queue: ProgressEvent[] = [];
  let wake: (() => void) | undefined;
  const stop = source.hub.listen((event) => {
    queue.push(event);
    wake?.();
  });
  const known = new Map<string, { version: number; fileName: string; status: DocumentStatus; percent: number }>();
  try {
    const fromRecord = (d: DocumentRecord): WatchUpdate | undefined => {
      const seen = known.get(d.id);
      // The catalog may lag the live events: a re-read never takes a watcher backwards.
      if (seen && (seen.version > d.version || (seen.version === d.version && !isAhead(d.status, d.progressPercent, seen)))) return undefined;
      known.set(d.id, { version: d.version, fileName: d.fileName, status: d.status, percent: d.progressPercent });
      return { documentId: d.id, fileName: d.fileName, status: d.status, percent: d.progressPercent, message: "", error: d.errorMessage, chunkCount: d.chunkCount };
    };
    const pendingCount = () => [...known.values()].filter((k) => !terminal(k.status)).length;

    for (const doc of await source.snapshot()) {
      const update = fromRecord(doc);
      if (update) yield update;
    }
    let lastSnapshot = Date.now();
    while (pendingCount() > 0 && !source.signal?.aborted) {
      if (queue.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 250).unref();
        });
        wake = undefined;
      }
      for (const event of queue.splice(0)) {
        let seen = known.get(event.documentId);
        if (!seen && source.followNew && event.knowledgeBaseId === source.knowledgeBaseId) {
          seen = { version: event.version, fileName: event.fileName ?? "", status: "pending", percent: 0 };
          known.set(event.documentId, seen);
        }
        if (!seen || event.version < seen.version) continue;
        // Once a version is finished, late events of the same version (a retry's echo) change nothing;
        // nor does an event behind what the catalog's re-read already showed (the index wrote
        // INDEXING while the embedder's last EMBEDDING event was still on its way here).
        if (event.version === seen.version && terminal(seen.status) && !terminal(event.phase)) continue;
        if (event.version === seen.version && !terminal(event.phase) && !isAhead(event.phase, event.percent, seen)) continue;
        Object.assign(seen, { version: event.version, status: event.phase, percent: event.percent, fileName: seen.fileName || event.fileName || "" });
        yield { documentId: event.documentId, fileName: seen.fileName, status: event.phase, percent: event.percent, message: event.message, error: event.error, chunkCount: event.chunkCount };
      }
      if (Date.now() - lastSnapshot > (source.resnapshotMs ?? 2_000)) {
        lastSnapshot = Date.now();
        for (const doc of await source.snapshot()) {
          if (!known.has(doc.id) && !source.followNew) continue;
          const update = fromRecord(doc);
          if (update) yield update;
        }
      }
    }
    // Aborted with documents still unfinished: the server is going away (a client that cancels reads
    // nothing more). A clean end would read as "done", so the watcher is told to come back.
    if (pendingCount() > 0) throw new UnavailableError(`Quarry is shutting down with ${pendingCount()} watched document(s) unfinished; watch again to follow them`);
  } finally {
    stop();
  }
}
