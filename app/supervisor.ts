// Keeps a set of named child processes running, as `quarry serve all` needs: each child's output
// line by line behind its name, a crashed child started again after a growing delay, and all of
// them stopped together (SIGTERM, then SIGKILL for one that will not drain).
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { Backoff, type BackoffOptions } from "../lib/backoff.ts";

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface SupervisorOptions {
  /** Where a child's stdout lines and the supervisor's own lines go. */
  out: (line: string) => void;
  /** Where a child's stderr lines go. */
  err: (line: string) => void;
  restartBackoff?: BackoffOptions;
  /** A child that ran this long before it crashed starts again after the shortest delay. */
  stableAfterMs?: number;
  /** How long a child may drain after SIGTERM before it is killed. */
  stopGraceMs?: number;
}

/** The label for the supervisor's own lines. */
export const SUPERVISOR_LABEL = "quarry";

interface Slot {
  spec: ChildSpec;
  backoff: Backoff;
  child?: ChildProcess;
  exited?: Promise<void>;
  startedAt: number;
  restartTimer?: NodeJS.Timeout;
}

export class Supervisor {
  private readonly slots: Slot[];
  private readonly width: number;
  private stopping: Promise<void> | undefined;

  constructor(specs: ChildSpec[], private readonly options: SupervisorOptions) {
    this.slots = specs.map((spec) => ({ spec, backoff: new Backoff(options.restartBackoff ?? { initialMs: 1_000, maxMs: 30_000 }), startedAt: 0 }));
    this.width = Math.max(SUPERVISOR_LABEL.length, ...specs.map((s) => s.name.length));
  }

  start(): void {
    for (const slot of this.slots) this.launch(slot);
  }

  /** The running child's pid, if it is running. */
  pid(name: string): number | undefined {
    const child = this.slots.find((s) => s.spec.name === name)?.child;
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  /** Stops every child, waiting for each to drain; resolves when none is left. */
  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      const grace = this.options.stopGraceMs ?? 20_000;
      await Promise.all(
        this.slots.map(async (slot) => {
          clearTimeout(slot.restartTimer);
          const { child, exited } = slot;
          if (!child || !exited || child.exitCode !== null || child.signalCode !== null) return;
          const killer = setTimeout(() => {
            this.say(`${slot.spec.name} did not stop within ${grace / 1000} s; killing it`);
            child.kill("SIGKILL");
          }, grace);
          child.kill("SIGTERM");
          await exited;
          clearTimeout(killer);
        }),
      );
    })());
  }

  /** Forces every child down at once (a second Ctrl-C). */
  kill(): void {
    for (const slot of this.slots) slot.child?.kill("SIGKILL");
  }

  say(message: string): void {
    this.options.out(`${SUPERVISOR_LABEL.padEnd(this.width)} | ${message}`);
  }

  private launch(slot: Slot): void {
    const { spec } = slot;
    // The IPC channel carries nothing: it lets the child notice this process dying (even by kill -9).
    const child = spawn(spec.command, spec.args, { env: spec.env, cwd: spec.cwd, stdio: ["ignore", "pipe", "pipe", "ipc"] });
    slot.child = child;
    slot.startedAt = Date.now();
    const label = spec.name.padEnd(this.width);
    createInterface({ input: child.stdout! }).on("line", (line) => this.options.out(`${label} | ${line}`));
    createInterface({ input: child.stderr! }).on("line", (line) => this.options.err(`${label} | ${line}`));
    slot.exited = new Promise((resolve) => {
      let done = false;
      const ended = (why: string) => {
        if (done) return;
        done = true;
        resolve();
        this.exited(slot, why);
      };
      child.once("error", (error) => ended(`could not start: ${error.message}`));
      child.once("exit", (code, signal) => ended(signal ? `signal ${signal}` : `code ${code}`));
    });
    if (child.pid !== undefined) this.say(`${spec.name} started (pid ${child.pid})`);
  }

  private exited(slot: Slot, why: string): void {
    if (this.stopping) {
      this.say(`${slot.spec.name} stopped (${why})`);
      return;
    }
    if (Date.now() - slot.startedAt >= (this.options.stableAfterMs ?? 60_000)) slot.backoff.reset();
    const delayMs = slot.backoff.next();
    this.say(`${slot.spec.name} exited (${why}); restarting in ${delayMs / 1000} s`);
    slot.restartTimer = setTimeout(() => {
      if (!this.stopping) this.launch(slot);
    }, delayMs);
  }
}
