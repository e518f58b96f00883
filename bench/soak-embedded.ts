// The embedded soak target: `quarry serve` in a child process on its own data folder. Its fault is
// the crash: SIGKILL (nothing drains, nothing is flushed by Quarry), then the same command again on
// the same folder and port, as an operator's restart policy would do.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayClient } from "../client/gateway-client.ts";
import { readSqliteChunks } from "./soak-stores.ts";
import type { SoakFault, SoakTarget } from "./soak-target.ts";
import { startQuarryProcess, type QuarryProcess } from "./quarry-process.ts";

export async function startEmbeddedSoakTarget(options: { kills: number; progress?(line: string): void }): Promise<SoakTarget> {
  const progress = options.progress ?? (() => {});
  const dataDir = await mkdtemp(join(tmpdir(), "quarry-bench-soak-"));
  const env = (port: string): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    QUARRY_MODELS_DIR: process.env.QUARRY_MODELS_DIR,
    QUARRY_DATA_DIR: dataDir,
    QUARRY_PORT: port,
    QUARRY_HOST: "127.0.0.1",
  });
  let server: QuarryProcess = await startQuarryProcess(["serve"], env("0"));
  const port = String(server.port);
  progress(`embedded quarry serve at ${server.url}, data in ${dataDir}`);

  const kill: SoakFault = {
    name: "kill -9 quarry serve, start it again on the same data folder",
    async inject() {
      const killed = performance.now();
      server.child.kill("SIGKILL");
      await server.exited;
      server = await startQuarryProcess(["serve"], env(port));
      return { downMs: Math.round(performance.now() - killed) };
    },
  };
  return {
    backend: "embedded",
    client: gatewayClient(server.url),
    url: server.url,
    faults: Array.from({ length: options.kills }, () => kill),
    dataDir,
    readChunks: async (knowledgeBaseId) => readSqliteChunks(join(dataDir, "quarry.db"), knowledgeBaseId),
    async stop({ keepData = false } = {}) {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill("SIGTERM");
        const exited = await Promise.race([server.exited, new Promise<undefined>((r) => setTimeout(r, 60_000))]);
        if (!exited) server.child.kill("SIGKILL");
      }
      if (!keepData) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
