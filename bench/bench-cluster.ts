// `quarry bench cluster`: the cluster fault proof (issue 24) at the size you ask for. The scenario is
// test/distributed/cluster-faults.test.ts itself, run by vitest in a child process, so the bench and
// CI's short form can never drift apart: the test writes its table here (QUARRY_CLUSTER_REPORT)
// before it asserts, so a run that misses a goal still reports what it measured.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const TEST_FILE = "test/distributed/cluster-faults.test.ts";

export interface ClusterBenchOptions {
  documents: number;
  /** Network cuts as well as kills (root and network namespaces); false runs the kills only. */
  cuts: boolean;
  progress: (line: string) => void;
}

export interface ClusterBenchReport {
  bench: "cluster";
  backend: "distributed";
  documents: number;
  /** The run's tables, as Markdown. */
  table: string;
  /** Whether every goal of the fault test held (vitest passed). */
  passed: boolean;
  minutes: number;
}

export async function runClusterBench(options: ClusterBenchOptions): Promise<ClusterBenchReport> {
  if (!process.env.TIKA_URL?.trim()) throw new Error("quarry bench cluster needs TIKA_URL: start Tika with deploy/local/engines.sh up tika, then eval \"$(deploy/local/engines.sh env)\"");
  const dir = await mkdtemp(join(tmpdir(), "quarry-bench-cluster-"));
  const reportFile = join(dir, "report.json");
  const started = Date.now();
  try {
    const env = {
      ...process.env,
      QUARRY_CLUSTER_FAULTS: "1",
      QUARRY_CLUSTER_FAULT_DOCUMENTS: String(options.documents),
      QUARRY_CLUSTER_HOSTS: options.cuts ? (process.env.QUARRY_CLUSTER_HOSTS ?? "") : "0",
      QUARRY_CLUSTER_REPORT: reportFile,
    };
    options.progress(`running ${TEST_FILE} with ${options.documents} documents (a six-node cluster of its own; minutes)`);
    const code = await new Promise<number>((resolveCode, reject) => {
      const child = spawn("npx", ["vitest", "run", TEST_FILE], { cwd: ROOT, env, stdio: ["ignore", "inherit", "inherit"] });
      child.once("error", reject);
      child.once("exit", (exitCode) => resolveCode(exitCode ?? 1));
    });
    const table = await readFile(reportFile, "utf8").catch(() => undefined);
    if (table === undefined) throw new Error(`the fault run ended (exit ${code}) before it measured anything; its output above says why`);
    return { bench: "cluster", backend: "distributed", documents: options.documents, table, passed: code === 0, minutes: Math.round((Date.now() - started) / 6_000) / 10 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatClusterReport(report: ClusterBenchReport): string {
  return [`# Cluster under faults: ${report.documents} documents, ${report.minutes} min, goals ${report.passed ? "held" : "MISSED"}`, "", report.table, ""].join("\n");
}
