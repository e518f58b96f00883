// A base's sources, kept fresh while any of them syncs: ListSources is read again every second
// until each running sync has its finished time. When WatchSourceSync lands, its stream replaces
// this polling (the row then updates as the sync's counts move, not once a second).
import { useCallback, useEffect, useRef, useState } from "react";
import type { Source } from "../../../gen/quarry/common/v1/source_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import { useLoad } from "../use-load.ts";

const POLL_MS = 1000;

export interface SourcesState {
  sources?: Source[];
  error?: string;
  reload: () => void;
  /** Whether a sync of this source runs (here, by the schedule or in another tab). */
  isSyncing: (source: Source) => boolean;
  /** Runs SyncSource and answers when it is done: undefined, or why it could not run. */
  syncNow: (source: Source) => Promise<string | undefined>;
}

export const syncRunning = (source: Source) => Boolean(source.lastSync?.startedAt && !source.lastSync.finishedAt);

export function useSources(knowledgeBase: string, onSynced: () => void): SourcesState {
  const list = useLoad(() => quarry.listSources({ knowledgeBase }).then((r) => r.sources), [knowledgeBase]);
  // Syncs this tab asked for and that have not answered yet (the list may not show them running yet).
  const [asked, setAsked] = useState<ReadonlySet<string>>(new Set());
  const isSyncing = useCallback((source: Source) => asked.has(source.id) || syncRunning(source), [asked]);
  const polling = asked.size > 0 || (list.data ?? []).some(syncRunning);
  const { reload } = list;

  // A sync seen running that has finished since (this tab's, the schedule's, another tab's): its
  // documents changed, so the screen reads them again.
  const wasRunning = useRef(new Set<string>());
  useEffect(() => {
    if (!list.data) return;
    const now = new Set(list.data.filter(syncRunning).map((s) => s.id));
    if ([...wasRunning.current].some((id) => !now.has(id))) onSynced();
    wasRunning.current = now;
  }, [list.data, onSynced]);

  useEffect(() => {
    if (!polling) return;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [polling, reload]);

  const syncNow = useCallback(
    async (source: Source) => {
      setAsked((s) => new Set(s).add(source.id));
      reload();
      try {
        await quarry.syncSource({ knowledgeBase, source: source.id });
        return undefined;
      } catch (error) {
        return describeError(error);
      } finally {
        setAsked((s) => {
          const rest = new Set(s);
          rest.delete(source.id);
          return rest;
        });
        reload();
        onSynced();
      }
    },
    [knowledgeBase, reload, onSynced],
  );

  return { sources: list.data, error: list.error, reload, isSyncing, syncNow };
}
