// How `quarry source sync` shows a sync while it runs: the counts WatchSourceSync streams, on a
// terminal as one line redrawn in place, anywhere else (a pipe, a CI log) as a plain line at most
// once per interval while the counts move. The listing's total is unknown until it ends, so this is
// a line of counts rather than a bar.
import type { SourceSync } from "../gen/quarry/common/v1/source_pb.ts";

export interface SyncProgress {
  update(sync: SourceSync): void;
  /** Ends the line (the final summary is printed by the caller). */
  stop(): void;
}

export function syncCounts(sync: SourceSync): string {
  return `listed ${sync.listed}, submitted ${sync.submitted}, unchanged ${sync.unchanged}, removed ${sync.removed}, moved ${sync.moved}, failed ${sync.failed}`;
}

export function startSyncProgress(out: NodeJS.WritableStream, name: string, options: { intervalMs?: number } = {}): SyncProgress {
  const tty = Boolean((out as { isTTY?: boolean }).isTTY);
  const intervalMs = options.intervalMs ?? 5_000;
  let last = "";
  let lastAt = 0;
  let drawn = false;
  return {
    update(sync) {
      const line = `syncing ${name}: ${syncCounts(sync)}`;
      if (line === last) return;
      if (tty) {
        // Carriage return and erase the line: the counts are redrawn in place.
        out.write(`\r\x1b[2K${line}`);
        drawn = true;
      } else if (Date.now() - lastAt >= intervalMs) {
        out.write(`${line}\n`);
        lastAt = Date.now();
      } else return;
      last = line;
    },
    stop() {
      if (drawn) out.write("\n");
    },
  };
}
