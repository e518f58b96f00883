// A `quarry serve` in a child process, as an operator runs it: started from a given bin (this
// checkout's, or another checkout's for a before/after comparison), ready once it prints its
// "listening" line. The shutdown test and `quarry bench fairness` use it.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { resolve } from "node:path";

export interface QuarryProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** Resolves when the process exits; `at` is performance.now() then. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** The kernel's peak RSS of the process so far, MiB (VmHWM); null where /proc is absent. */
  peakRssMiB(): number | null;
}

export const THIS_QUARRY_BIN = resolve(import.meta.dirname, "..", "bin", "quarry.mjs");

/** `nodeArgs` go to node itself, before the bin (--cpu-prof, which NODE_OPTIONS refuses). */
export async function startQuarryProcess(args: string[], env: NodeJS.ProcessEnv, bin = THIS_QUARRY_BIN, readyTimeoutMs = 90_000, nodeArgs: string[] = []): Promise<QuarryProcess> {
  // The other checkout's own node_modules resolve its imports: run it from its folder.
  const child = spawn(process.execPath, [...nodeArgs, bin, ...args], { env, cwd: resolve(bin, "..", ".."), stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal, at: performance.now() })),
  );
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`not listening within ${readyTimeoutMs} ms:\n${output}`)), readyTimeoutMs);
    const look = () => {
      const match = /Quarry \w+ listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        done(match[1]);
      }
    };
    child.stdout!.on("data", look);
    void exited.then(() => fail(new Error(`exited before listening:\n${output}`)));
  });
  return {
    child,
    url,
    port: Number(new URL(url).port),
    exited,
    output: () => output,
    peakRssMiB: () => {
      try {
        const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        return match ? Math.round(Number(match[1]) / 1024) : null;
      } catch {
        return null;
      }
    },
  };
}

/** Whether a fresh TCP connection to the port is refused. */
export function connectionRefused(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((done) => {
    const socket = net.connect(port, host);
    socket.once("connect", () => (socket.destroy(), done(false)));
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code === "ECONNREFUSED"));
  });
}

/** `quarry serve` (embedded) on a free loopback port over a data folder, with only what finds the installed models inherited (and `env`). */
export function startEmbeddedServe(dataDir: string, bin = THIS_QUARRY_BIN, env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Promise<QuarryProcess> {
  return startQuarryProcess(["serve"], {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    QUARRY_MODELS_DIR: process.env.QUARRY_MODELS_DIR,
    QUARRY_DATA_DIR: dataDir,
    QUARRY_PORT: "0",
    QUARRY_HOST: "127.0.0.1",
    ...env,
  }, bin, undefined, nodeArgs);
}
