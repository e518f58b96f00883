// Live progress of documents from WatchIngestion, one stream per watch() (the gateway ends a
// stream once every document it watches is ready or failed). `settled` is called as each one
// settles, so the screen can reload counts.
import { useCallback, useEffect, useRef, useState } from "react";
import type { WatchIngestionResponse } from "../../../gen/quarry/gateway/v1/gateway_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError, isAbort } from "../api/errors.ts";
import { isSettled } from "../format.ts";

export type Progress = Pick<WatchIngestionResponse, "documentId" | "fileName" | "status" | "percent" | "message" | "error" | "chunkCount">;

export function useIngestion(knowledgeBase: string, settled: () => void) {
  const [progress, setProgress] = useState<ReadonlyMap<string, Progress>>(new Map());
  const [error, setError] = useState<string>();
  const aborts = useRef(new Set<AbortController>());
  const onSettled = useRef(settled);
  onSettled.current = settled;

  useEffect(() => {
    const open = aborts.current;
    return () => {
      for (const a of open) a.abort();
      open.clear();
    };
  }, []);

  const watch = useCallback(
    async (documentIds: string[]) => {
      const abort = new AbortController();
      aborts.current.add(abort);
      try {
        const stream = quarry.watchIngestion({ documentIds, knowledgeBase: documentIds.length ? "" : knowledgeBase }, { signal: abort.signal });
        for await (const update of stream) {
          setProgress((m) => new Map(m).set(update.documentId, update));
          if (isSettled(update.status)) onSettled.current();
        }
      } catch (e) {
        if (!isAbort(e)) setError(describeError(e));
      } finally {
        aborts.current.delete(abort);
      }
    },
    [knowledgeBase],
  );

  return { progress, watch, error };
}
