// Steps that run on a worker thread, where no tracer is registered (the SDK and its exporter live on
// the process's main thread): while recordSteps runs, inSpan and inSpanSync (spans.ts) note each
// step's name, attributes and times here instead of making spans, and the calling thread replays
// them under its own span (replaySteps), so a search run on a read thread still shows its lists and
// its fusion in the trace.
import type { Attributes } from "@opentelemetry/api";

/** A step as a thread recorded it, in epoch milliseconds: both threads read the same clock. */
export interface RecordedStep {
  name: string;
  attributes: Attributes;
  startMs: number;
  endMs: number;
  /** The error's message when the step failed. */
  failed?: string;
}

let recording: RecordedStep[] | undefined;

/** The list steps are recorded into, while a recordSteps call is under way on this thread. */
export function stepRecorder(): RecordedStep[] | undefined {
  return recording;
}

/** Runs work while recording its steps; a read thread runs one task at a time (piscina's default), so one list serves it. */
export async function recordSteps<T>(work: () => Promise<T>): Promise<{ value: T; steps: RecordedStep[] }> {
  const steps: RecordedStep[] = [];
  recording = steps;
  try {
    return { value: await work(), steps };
  } finally {
    recording = undefined;
  }
}
