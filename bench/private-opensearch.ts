// An OpenSearch of the bench's own, started by deploy/local/engines.sh from the cached install on a
// temporary run folder and free ports, so the soak can stop it without pulling the shared engine
// (127.0.0.1:9200, the standard run folder) out from under everyone else. Its heap is smaller than
// the shared one's: the soak's corpus is small.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../lib/testing/free-port.ts";

const run = promisify(execFile);
const ENGINES_SH = resolve(import.meta.dirname, "..", "deploy", "local", "engines.sh");

export interface PrivateOpenSearch {
  url: string;
  /** Stops the engine (SIGTERM to its process group), waits `ms`, starts it again on the same data. */
  outage(ms: number): Promise<{ downMs: number }>;
  stop(): Promise<void>;
}

export async function startPrivateOpenSearch(options: { heap?: string; progress?(line: string): void } = {}): Promise<PrivateOpenSearch> {
  const dir = await mkdtemp(join(tmpdir(), "quarry-opensearch-"));
  const [port, transport] = [await freePort(), await freePort()];
  const heap = options.heap ?? "512m";
  const env = {
    ...process.env,
    QUARRY_ENGINES_RUN: dir,
    QUARRY_OPENSEARCH_PORT: String(port),
    QUARRY_OPENSEARCH_TRANSPORT_PORT: String(transport),
    OPENSEARCH_JAVA_OPTS: `-Xms${heap} -Xmx${heap}`,
  };
  const engines = async (command: "up" | "down") => {
    try {
      await run("bash", [ENGINES_SH, command, "opensearch"], { env, timeout: 600_000 });
    } catch (error) {
      const e = error as Error & { stderr?: string };
      throw new Error(`engines.sh ${command} opensearch (run folder ${dir}) failed: ${e.stderr || e.message}`);
    }
  };
  const up = async () => {
    const t0 = performance.now();
    await engines("up");
    options.progress?.(`private OpenSearch at 127.0.0.1:${port} ready in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  };
  try {
    await up();
  } catch (error) {
    await engines("down").catch(() => {});
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    async outage(ms) {
      const t0 = performance.now();
      await engines("down");
      await new Promise((r) => setTimeout(r, ms));
      await up();
      return { downMs: Math.round(performance.now() - t0) };
    },
    async stop() {
      await engines("down").catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
