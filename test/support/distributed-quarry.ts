// Quarry in distributed mode for system tests: the six services as separate child processes
// (`node bin/quarry.mjs serve <name>`), each on a free port, talking gRPC to each other and sharing
// the real engines. Each run gets its own OpenSearch prefix, its own Kafka topic prefix and its own
// data folder, all removed on stop. Readiness is what an orchestrator would check: the process's
// "listening" line, then grpc.health.v1 Check = SERVING (said once its peers answer and its bus
// consumers joined).
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { Kafka, logLevel } from "kafkajs";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import type { Env, ServiceName } from "../../lib/config.ts";
import { transportFor, type Protocol } from "./embedded-quarry.ts";
import { waitServing } from "../../lib/testing/wait-serving.ts";
import { freePort } from "../../lib/testing/free-port.ts";

export const SERVICE_NAMES: ServiceName[] = ["index", "embedder", "parser", "chunker", "answer", "gateway"];

/**
 * Each wave's peers answer before it starts: a service says SERVING once the peers it waits for do
 * (the parser and the embedder wait for the index, the chunker for the embedder, the gateway for
 * every peer). Every address is known before the first start (ports picked up front), so a peer that
 * is dialled only now and then (the index calls the embedder for a change of model) has it too.
 * Any order works; test/distributed/start-order.test.ts starts them in reverse.
 */
const START_WAVES: ServiceName[][] = [["index"], ["parser", "embedder"], ["chunker", "answer"], ["gateway"]];

/** Only what locates node, the model cache and the home folder comes from the outer environment. */
const INHERITED = ["PATH", "HOME", "QUARRY_MODELS_DIR", "TMPDIR", "LANG"];

const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 20_000;
const PORT_RACE_ATTEMPTS = 3;

export interface RunningProcess {
  name: ServiceName;
  url: string;
  port: number;
  pid: number;
  logFile: string;
}

export interface DistributedQuarryOptions {
  opensearchUrl: string;
  kafkaBrokers: string;
  tikaUrl: string;
  /** Extra variables for one service, e.g. the parser's TIKA_URL pointed at a proxy. */
  serviceEnv?: Partial<Record<ServiceName, Env>>;
  /** Extra variables for every service. */
  env?: Env;
}

export interface DistributedQuarry {
  /** The gateway. */
  url: string;
  /** Connect protocol over HTTP/1.1 to the gateway. */
  client: QuarryClient;
  clientFor(protocol: Protocol): QuarryClient;
  services: Record<ServiceName, RunningProcess>;
  runId: string;
  /** The token every internal call and /metrics read carries (QUARRY_INTERNAL_TOKEN). */
  internalToken: string;
  opensearchPrefix: string;
  topicPrefix: string;
  dataDir: string;
  /** The last lines a service logged, for failure messages. */
  logTail(name: ServiceName, lines?: number): string;
  /**
   * Starts one more process of a service beside the first, with the same settings (a consumer
   * group splits the stage's partitions between them). Stopped with the rest by stop().
   */
  startReplica(name: ServiceName): Promise<RunningProcess>;
  stop(): Promise<void>;
}

export async function startDistributedQuarry(options: DistributedQuarryOptions): Promise<DistributedQuarry> {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const dataDir = await mkdtemp(join(tmpdir(), "quarry-dist-"));
  const opensearchPrefix = `quarry-e2e-${runId}`;
  const topicPrefix = `e2e.${runId}.`;
  const base: Env = {
    ...Object.fromEntries(INHERITED.map((name) => [name, process.env[name]])),
    OPENSEARCH_URL: options.opensearchUrl,
    KAFKA_BROKERS: options.kafkaBrokers,
    TIKA_URL: options.tikaUrl,
    QUARRY_OPENSEARCH_PREFIX: opensearchPrefix,
    // Per-run topics and groups; see the report on lib/bus: today's bus does not read it yet.
    QUARRY_TOPIC_PREFIX: topicPrefix,
    QUARRY_KAFKA_CLIENT_ID: `quarry-e2e-${runId}`,
    // The gateway writes large uploads here and the parser reads them: one folder for the run.
    QUARRY_DATA_DIR: dataDir,
    QUARRY_HOST: "127.0.0.1",
    QUARRY_LOG_LEVEL: "info",
    // Every internal call of every distributed test carries the shared token, so a client that forgot it fails the run.
    QUARRY_INTERNAL_TOKEN: `internal-${runId}-${randomBytes(12).toString("hex")}`,
    ...options.env,
  };

  const children = new Map<ServiceName, ChildProcess>();
  const replicas: ChildProcess[] = [];
  const replicaCounts = new Map<ServiceName, number>();
  const services = {} as Record<ServiceName, RunningProcess>;
  const logFile = (name: ServiceName) => join(dataDir, `${name}.log`);
  const tail = (path: string, lines = 40) => {
    try {
      return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  };
  const logTail = (name: ServiceName, lines = 40) => tail(logFile(name), lines);

  // The first process of each service on a port picked now; replicas on port 0 (the process picks a
  // free one and prints its URL), as nothing dials a replica by address.
  const ports = new Map<ServiceName, number>();
  for (const name of SERVICE_NAMES) ports.set(name, await freePort());
  const start = (name: ServiceName, replica?: string): Promise<RunningProcess> => {
    const env: Env = { ...base, ...options.serviceEnv?.[name] };
    env[name === "gateway" ? "QUARRY_PORT" : `QUARRY_${name.toUpperCase()}_PORT`] = replica === undefined ? String(ports.get(name)) : "0";
    for (const peer of SERVICE_NAMES) {
      if (peer !== "gateway") env[`QUARRY_${peer.toUpperCase()}_URL`] = `http://127.0.0.1:${ports.get(peer)}`;
    }
    const child = spawn(process.execPath, ["bin/quarry.mjs", "serve", name], {
      cwd: resolve(import.meta.dirname, "../.."),
      env: env as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (replica === undefined) children.set(name, child);
    else replicas.push(child);
    const logPath = replica === undefined ? logFile(name) : join(dataDir, `${name}-${replica}.log`);
    const log = createWriteStream(logPath);
    child.stderr!.pipe(log, { end: false });
    return new Promise<RunningProcess>((resolvePromise, reject) => {
      let buffered = "";
      let settled = false;
      const fail = (why: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        // Let the log stream flush what the process said last.
        setTimeout(() => reject(new Error(`quarry serve ${name} ${why}\n--- ${logPath} ---\n${tail(logPath)}`)), 200);
      };
      const timer = setTimeout(() => fail(`was not listening within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
      child.once("exit", (code, signal) => fail(`exited (code ${code}, signal ${signal}) before it was ready`));
      child.stdout!.on("data", (data: Buffer) => {
        log.write(data);
        if (settled) return;
        buffered += data.toString("utf8");
        const match = /Quarry \w+ listening on (http:\/\/[^\s]+)/.exec(buffered);
        if (!match) return;
        settled = true;
        clearTimeout(timer);
        const url = match[1].replace(/\/$/, "");
        resolvePromise({ name, url, port: Number(new URL(url).port), pid: child.pid!, logFile: logPath });
      });
    }).then(async (running) => {
      await waitServing(running);
      if (replica === undefined) services[name] = running;
      return running;
    });
  };

  const stop = async () => {
    // The gateway first, so nothing new comes in while the stages drain.
    const order: ServiceName[][] = [["gateway"], ["answer", "chunker", "parser", "embedder", "index"]];
    for (const wave of order) await Promise.all(wave.map((name) => stopChild(children.get(name))));
    await Promise.all(replicas.map(stopChild));
    await cleanUp(options, opensearchPrefix, topicPrefix);
    if (process.env.QUARRY_KEEP_E2E_LOGS !== "1") await rm(dataDir, { recursive: true, force: true });
  };

  // A port is picked before its process listens, so another test's pick in between can take it
  // (a CI run lost a start so): the services are started again on fresh ports, as every peer was
  // told the old ones.
  for (let attempt = 1; ; attempt++) {
    try {
      for (const wave of START_WAVES) {
        // Every start of the wave settles before a retry, so none resolves later into the new run.
        const failed = (await Promise.allSettled(wave.map((name) => start(name)))).find((result) => result.status === "rejected");
        if (failed) throw failed.reason;
      }
      break;
    } catch (error) {
      if (attempt < PORT_RACE_ATTEMPTS && String(error).includes("is already in use")) {
        await Promise.all([...children.values()].map(stopChild));
        children.clear();
        for (const name of SERVICE_NAMES) ports.set(name, await freePort());
        continue;
      }
      await stop().catch(() => {});
      throw error;
    }
  }

  const gateway = services.gateway;
  const clients = new Map<Protocol, QuarryClient>();
  const clientFor = (protocol: Protocol) => {
    let client = clients.get(protocol);
    if (!client) {
      client = createClient(QuarryService, transportFor(gateway.url, protocol));
      clients.set(protocol, client);
    }
    return client;
  };
  const startReplica = (name: ServiceName) => {
    const count = (replicaCounts.get(name) ?? 1) + 1;
    replicaCounts.set(name, count);
    return start(name, String(count));
  };
  return { url: gateway.url, client: clientFor("connect"), clientFor, services, runId, internalToken: base.QUARRY_INTERNAL_TOKEN!, opensearchPrefix, topicPrefix, dataDir, logTail, startReplica, stop };
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => {
    const killer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    child.once("exit", () => {
      clearTimeout(killer);
      resolvePromise();
    });
    child.kill("SIGTERM");
  });
}

/** Removes what a run left in the shared engines: its indices, template, topics and groups. */
export async function cleanUp(options: Pick<DistributedQuarryOptions, "opensearchUrl" | "kafkaBrokers">, opensearchPrefix: string, topicPrefix: string): Promise<void> {
  // Any node of a cluster will do (the first listed).
  const os = options.opensearchUrl.split(",")[0]!.replace(/\/$/, "");
  await deleteOpenSearchNamespace(os, `${opensearchPrefix}-`).catch(() => {});
  const kafka = new Kafka({ brokers: options.kafkaBrokers.split(","), clientId: "quarry-e2e-cleanup", logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(topicPrefix));
    if (topics.length > 0) await admin.deleteTopics({ topics });
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(topicPrefix));
    if (groups.length > 0) await admin.deleteGroups(groups);
  } catch {
    // Best effort: a broker restarted by a fault test may still be electing leaders.
  } finally {
    await admin.disconnect().catch(() => {});
  }
}
