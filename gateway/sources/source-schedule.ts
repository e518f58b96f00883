// The schedule: every tick, sync each source whose interval has passed since its last sync started.
// Syncs run one after another (a folder or site at a time keeps the pipeline's load even); a source
// syncing already (by hand) is skipped until the next tick.
import type { Logger } from "../../lib/logger.ts";
import type { Sources } from "./sources.ts";

export class SourceSchedule {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly sources: Sources,
    private readonly options: { tickMs: number; logger?: Logger },
  ) {}

  start(): void {
    this.arm();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
  }

  /** One pass over the due sources (what each tick runs). */
  async tick(): Promise<void> {
    // A sync a stopped gateway left "running" is marked interrupted once its lease has lapsed.
    await this.sources.recoverInterrupted();
    for (const source of await this.sources.due()) {
      if (this.stopped) return;
      await this.sources.run(source).catch((error: unknown) => this.options.logger?.warn({ err: error, source: source.id }, "a scheduled sync did not run"));
    }
  }

  private arm(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .catch((error: unknown) => this.options.logger?.warn({ err: error }, "the source schedule could not list the sources"))
        .finally(() => this.arm());
    }, this.options.tickMs);
    this.timer.unref();
  }
}
