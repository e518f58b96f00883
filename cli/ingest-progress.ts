// How `quarry ingest` shows progress while documents ingest. On a terminal, a bar that redraws in
// place; anywhere else (a pipe, a CI log), a plain line now and then, since a redrawn bar there is
// either invisible or hundreds of carriage returns.
import cliProgress from "cli-progress";

export interface ProgressState {
  /** Documents that ended, ready or failed. */
  done: number;
  total: number;
  /** Sum of every document's percent, for the bar's fill. */
  percentSum: number;
  /** The file the last update was about. */
  file: string;
}

export interface IngestProgress {
  update(state: ProgressState): void;
  stop(state: ProgressState): void;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What the bar's counter says: documents, not percent points. */
export function documentsDone(state: Pick<ProgressState, "done" | "total">): string {
  return `${state.done}/${plural(state.total, "document")} done`;
}

export function startProgress(out: NodeJS.WritableStream, total: number, options: { intervalMs?: number } = {}): IngestProgress {
  const start: ProgressState = { done: 0, total, percentSum: 0, file: "" };
  return (out as { isTTY?: boolean }).isTTY ? new TerminalBar(out, start) : new PlainLines(out, start, options.intervalMs ?? 5_000);
}

class TerminalBar implements IngestProgress {
  private readonly bar: cliProgress.SingleBar;

  constructor(out: NodeJS.WritableStream, start: ProgressState) {
    this.bar = new cliProgress.SingleBar(
      { format: "ingesting [{bar}] {percentage}% | {documents} | {file}", hideCursor: true, stream: out as never },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(start.total * 100, 0, { documents: documentsDone(start), file: "" });
  }

  update(state: ProgressState): void {
    this.bar.update(state.percentSum, { documents: documentsDone(state), file: state.file });
  }

  stop(state: ProgressState): void {
    this.update(state);
    this.bar.stop();
  }
}

/** A line at the start, then at most one per interval while anything moves, and one at the end. */
class PlainLines implements IngestProgress {
  private lastAt = 0;
  private last = "";

  constructor(private readonly out: NodeJS.WritableStream, start: ProgressState, private readonly intervalMs: number) {
    this.write(start);
  }

  update(state: ProgressState): void {
    if (Date.now() - this.lastAt >= this.intervalMs) this.write(state);
  }

  stop(state: ProgressState): void {
    this.write(state);
  }

  private write(state: ProgressState): void {
    const line = `ingesting: ${documentsDone(state)}, ${overallPercent(state)}%`;
    if (line === this.last) return;
    this.lastAt = Date.now();
    this.last = line;
    this.out.write(`${line}\n`);
  }
}

function overallPercent(state: ProgressState): number {
  return state.total === 0 ? 100 : Math.floor(state.percentSum / state.total);
}
