// `quarry ...` as a child process for the whole-system tests: its output kept line by line (and in a
// log file) so a test can wait for a line, stopped with SIGTERM (then SIGKILL), on free ports.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";
import type { Env } from "../../lib/config.ts";
import { waitFor } from "./wait-for.ts";

const ROOT = resolve(import.meta.dirname, "../..");
/** Generous: with the whole suite running on two cores, a process can take a minute to start. */
export const START_TIMEOUT_MS = 150_000;

export interface Proc {
  child: ChildProcess;
  lines: string[];
  logFile: string;
  /** Resolves with the first line matching, waiting for it if need be. */
  line(pattern: RegExp, timeoutMs?: number, after?: number): Promise<string>;
  alive(): boolean;
}

export function launch(args: string[], env: Env, logFile: string): Proc {
  const child = spawn(process.execPath, ["bin/quarry.mjs", ...args], { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const log = createWriteStream(logFile);
  let partial = "";
  const take = (data: Buffer) => {
    log.write(data);
    const parts = (partial + data.toString("utf8")).split("\n");
    partial = parts.pop()!;
    lines.push(...parts);
  };
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  return {
    child,
    lines,
    logFile,
    alive: () => child.exitCode === null && child.signalCode === null,
    line: (pattern, timeoutMs = START_TIMEOUT_MS, after = 0) =>
      waitFor(`a line matching ${pattern} from quarry ${args.join(" ")}`, async () => lines.slice(after).find((l) => pattern.test(l)), timeoutMs).catch(
        (error: Error) => {
          throw new Error(`${error.message}; its last lines:\n${lines.slice(-25).join("\n")}`);
        },
      ),
  };
}

export function stopProc(proc: Proc, timeoutMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolvePromise) => {
    if (!proc.alive()) return resolvePromise({ code: proc.child.exitCode, signal: proc.child.signalCode });
    const killer = setTimeout(() => proc.child.kill("SIGKILL"), timeoutMs);
    proc.child.once("exit", (code, signal) => {
      clearTimeout(killer);
      resolvePromise({ code, signal });
    });
    proc.child.kill("SIGTERM");
  });
}

export function portFree(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const probe = createServer();
    probe.once("error", () => resolvePromise(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolvePromise(true)));
  });
}

/** The first of `count` consecutive free ports, well away from the standard ones. */
export async function freeBase(count = 6): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const free = await Promise.all(Array.from({ length: count }, (_, i) => portFree(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error(`found no ${count} consecutive free ports`);
}
