// SyncSource with its progress from WatchSourceSync meanwhile (what `quarry source sync` shows). A
// watch that comes before the sync has begun (or after it ended) answers no running state and ends;
// it is taken up again until the sync answers. Progress is a view: a watch that fails leaves the
// sync to answer alone.
import { setTimeout } from "node:timers/promises";
import { SourceSyncState, type SourceSync } from "../gen/quarry/common/v1/source_pb.ts";
import type { SyncSourceResponse } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { QuarryClient } from "./gateway-client.ts";

const WATCH_AGAIN_MS = 200;

/** `onProgress` gets each running state the watch streams (the newest, never a backlog). */
export async function syncWithProgress(client: QuarryClient, kb: string, source: string, onProgress: (sync: SourceSync) => void): Promise<SyncSourceResponse> {
  const stopWatching = new AbortController();
  const synced = client.syncSource({ knowledgeBase: kb, source });
  const watching = (async () => {
    while (!stopWatching.signal.aborted) {
      for await (const { sync } of client.watchSourceSync({ knowledgeBase: kb, source }, { signal: stopWatching.signal })) {
        if (sync?.state === SourceSyncState.RUNNING) onProgress(sync);
      }
      await setTimeout(WATCH_AGAIN_MS, undefined, { signal: stopWatching.signal }).catch(() => {});
    }
  })().catch(() => {});
  try {
    return await synced;
  } finally {
    stopWatching.abort();
    await watching;
  }
}
