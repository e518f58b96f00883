// What the tests that run the real Prometheus share: finding Debian's binary (a requirement that
// fails under QUARRY_REQUIRE_ENGINES and is skipped loudly elsewhere) and a free port for its web API.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { Requirement } from "./engines.ts";

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

export const prometheusBinary: Requirement = {
  value: process.env.QUARRY_PROMETHEUS_BIN ?? onPath("prometheus"),
  requiredBy: "QUARRY_REQUIRE_ENGINES",
  missing: "the prometheus binary is not on PATH",
  hint: "Install it with apt-get install -y prometheus (CI does, in .ci/run)",
};

/** A Prometheus process on dir/prometheus.yml, its data in dir/data, its web API on the given port. */
export interface RunningPrometheus {
  /** Everything it printed so far: a failed expectation shows it. */
  output(): string;
  stop(): Promise<void>;
}

export function startPrometheus(binary: string, dir: string, port: number): RunningPrometheus {
  const child = spawn(binary, [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  return {
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
