// The distributed soak target: `quarry serve all` (six service processes under its supervisor) on
// a private Kafka broker and a private OpenSearch, so the faults touch nobody else's engines:
// one service killed -9 (the supervisor starts it again), the broker restarted, OpenSearch stopped
// for 10 s and started again on its data.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, readFileSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gatewayClient } from "../client/gateway-client.ts";
import { servicePort, type ServiceName } from "../lib/config.ts";
import { waitServing } from "../lib/testing/wait-serving.ts";
import { startPrivateKafka } from "../lib/testing/private-kafka.ts";
import { startPrivateOpenSearch } from "./private-opensearch.ts";
import { readOpenSearchChunks } from "./soak-stores.ts";
import type { SoakTarget } from "./soak-target.ts";

const QUARRY_BIN = resolve(import.meta.dirname, "..", "bin", "quarry.mjs");
/** The service killed -9: it holds the most work in flight (chunks being embedded). */
const KILLED: ServiceName = "embedder";
const OPENSEARCH_OUTAGE_MS = 10_000;

export async function startDistributedSoakTarget(options: { progress?(line: string): void }): Promise<SoakTarget> {
  const progress = options.progress ?? (() => {});
  const dataDir = await mkdtemp(join(tmpdir(), "quarry-bench-soak-dist-"));
  const cleanups: (() => Promise<void>)[] = [async () => rm(dataDir, { recursive: true, force: true })];
  const undo = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  try {
    const kafka = await startPrivateKafka();
    cleanups.push(() => kafka.stop());
    progress(`private Kafka at ${kafka.brokers}`);
    const opensearch = await startPrivateOpenSearch({ progress });
    cleanups.push(() => opensearch.stop());

    const runId = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
    const prefix = `quarry-soak-${runId}`;
    const base = await freeBasePort();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      QUARRY_MODELS_DIR: process.env.QUARRY_MODELS_DIR,
      QUARRY_BASE_PORT: String(base),
      QUARRY_HOST: "127.0.0.1",
      QUARRY_DATA_DIR: dataDir,
      OPENSEARCH_URL: opensearch.url,
      KAFKA_BROKERS: kafka.brokers,
      QUARRY_OPENSEARCH_PREFIX: prefix,
      QUARRY_TOPIC_PREFIX: `soak.${runId}.`,
      QUARRY_INTERNAL_TOKEN: randomBytes(16).toString("hex"),
    };
    const portOf = (name: ServiceName) => servicePort(env as Record<string, string>, name);
    const log = createWriteStream(join(dataDir, "serve-all.log"));
    const child = spawn(process.execPath, [QUARRY_BIN, "serve", "all"], { env, cwd: resolve(QUARRY_BIN, "..", ".."), stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    cleanups.push(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const stopped = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 90_000))]);
      if (!stopped) child.kill("SIGKILL");
    });
    const url = `http://127.0.0.1:${portOf("gateway")}`;
    await waitServing({ name: "gateway", url }, 600_000);
    progress(`quarry serve all at ${url} (pid ${child.pid}), data in ${dataDir}`);

    return {
      backend: "distributed",
      client: gatewayClient(url),
      url,
      dataDir,
      faults: [
        {
          name: `kill -9 the ${KILLED} service (quarry serve all's supervisor starts it again)`,
          async inject() {
            const t0 = performance.now();
            const pid = servicePid(child.pid!, KILLED);
            if (pid === undefined) throw new Error(`no running ${KILLED} child of quarry serve all (pid ${child.pid})`);
            process.kill(pid, "SIGKILL");
            // Until the old one is gone and a new one answers.
            while (servicePid(child.pid!, KILLED) === pid) await new Promise((r) => setTimeout(r, 100));
            await waitServing({ name: KILLED, url: `http://127.0.0.1:${portOf(KILLED)}` }, 300_000);
            return { downMs: Math.round(performance.now() - t0) };
          },
        },
        {
          name: "restart the Kafka broker (SIGTERM, start again on its data)",
          async inject() {
            const { downMs, upMs } = await kafka.restart();
            return { downMs: downMs + upMs };
          },
        },
        {
          name: `stop OpenSearch for ${OPENSEARCH_OUTAGE_MS / 1000} s, start it again on its data`,
          inject: () => opensearch.outage(OPENSEARCH_OUTAGE_MS),
        },
      ],
      readChunks: (knowledgeBaseId) => readOpenSearchChunks(opensearch.url, prefix, knowledgeBaseId),
      async stop({ keepData = false } = {}) {
        if (keepData) cleanups.shift();
        await undo();
      },
    };
  } catch (error) {
    await undo();
    throw error;
  }
}

/** The pid of the `quarry serve <name>` child of the supervisor, from /proc. */
function servicePid(supervisorPid: number, name: ServiceName): number | undefined {
  for (const task of readdirSync(`/proc/${supervisorPid}/task`)) {
    let children: string;
    try {
      children = readFileSync(`/proc/${supervisorPid}/task/${task}/children`, "utf8");
    } catch {
      continue;
    }
    for (const pid of children.trim().split(/\s+/).filter(Boolean).map(Number)) {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        if (args.at(-3) === "serve" && args.at(-2) === name) return pid;
      } catch {
        // exited meanwhile
      }
    }
  }
  return undefined;
}

/** A gateway port with the five after it free too, as quarry serve all needs. */
async function freeBasePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 20_000);
    const free = await Promise.all(Array.from({ length: 6 }, (_, i) => portFree(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error("no six consecutive free ports found for quarry serve all");
}

function portFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once("error", () => done(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => done(true)));
  });
}
