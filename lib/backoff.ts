// Growing delays for what comes back by itself: a peer that is not up yet, a child that crashed.
import { setTimeout as delay } from "node:timers/promises";

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Each delay is the last one times this. */
  factor?: number;
}

export class Backoff {
  private attempt = 0;

  constructor(private readonly options: BackoffOptions) {}

  /** The next delay: initialMs, then growing by factor up to maxMs. */
  next(): number {
    const { initialMs, maxMs, factor = 2 } = this.options;
    const ms = Math.min(maxMs, initialMs * factor ** this.attempt);
    this.attempt++;
    return ms;
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Waits ms, or rejects with an AbortError as soon as the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal });
}
