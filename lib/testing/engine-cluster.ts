// A 3-node OpenSearch cluster and a 3-broker Kafka of a test's (or a bench's) own, started through
// `deploy/local/engines.sh up --cluster` in a temporary run folder on free ports, so a fault test can
// kill -9 a node and bring it back without touching the engines every other suite shares. With
// `hosts`, each node is a host of its own (a network namespace on a bridge: engines.sh --hosts), so a
// test can also cut a node off the network while it runs.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";

export type ClusterNode = "opensearch-1" | "opensearch-2" | "opensearch-3" | "kafka-1" | "kafka-2" | "kafka-3";

export interface EngineCluster {
  /** Comma-separated, as OPENSEARCH_URL and KAFKA_BROKERS take them. */
  opensearchUrls: string;
  kafkaBrokers: string;
  runDir: string;
  /** Whether each node is a host of its own, so cut and heal work. */
  hosts: boolean;
  /** kill -9 of a node's whole process group (no shutdown, no flush, as a lost machine); resolves once it is gone and its ports are free. */
  kill(node: ClusterNode): Promise<void>;
  /** Starts a killed node again on its data and resolves once engines.sh finds it ready. */
  restart(node: ClusterNode): Promise<void>;
  /** Takes a running node off the network (its link goes down): peers and clients get no answer, not a refusal. Needs hosts. */
  cut(node: ClusterNode): Promise<void>;
  /** Puts a cut node back on the network. */
  heal(node: ClusterNode): Promise<void>;
  stop(): Promise<void>;
}

const SCRIPT = resolve(import.meta.dirname, "../../deploy/local/engines.sh");
/** engines.sh waits for each node itself; this only bounds a hung script. */
const SCRIPT_TIMEOUT_MS = 15 * 60_000;

function enginesDir(): string {
  return process.env.QUARRY_ENGINES_DIR ?? join(homedir(), ".cache/quarry/engines");
}

/** Why the cluster cannot start here (the OpenSearch and Kafka installs engines.sh fetches are missing), or undefined. */
export function clusterUnavailable(): string | undefined {
  const dir = enginesDir();
  const installed = existsSync(dir) ? readdirSync(dir) : [];
  for (const engine of ["opensearch", "kafka"]) {
    if (!installed.some((name) => name.startsWith(`${engine}-`) && existsSync(join(dir, name, ".quarry-ready")))) {
      return `no ${engine} install in ${dir} (deploy/local/engines.sh fetch ${engine})`;
    }
  }
  return undefined;
}

/**
 * Why nodes cannot be hosts of their own here, or undefined: engines.sh --hosts makes network
 * namespaces and a bridge, which needs root and iproute2's netns support.
 */
export function hostsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "network namespaces need root";
  try {
    execFileSync("ip", ["netns", "list"], { stdio: "ignore" });
  } catch (error) {
    return `iproute2 cannot list network namespaces here (${(error as Error).message.split("\n")[0]})`;
  }
  return undefined;
}

/**
 * Whether any process of the group still runs. A process counts until every one of its threads has
 * ended: when a JVM is killed its main thread often ends first and shows as a zombie while the other
 * threads are still tearing down the heap, and the sockets (the node's listening ports) close only
 * when the last thread has gone. Reading only the main thread's state let a restart find the port
 * still taken.
 */
function groupAlive(group: number): boolean {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const main = taskState(`/proc/${entry}/stat`);
    if (main === undefined || main.group !== group) continue;
    if (main.running) return true;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${entry}/task`);
    } catch {
      continue; // it ended while we looked
    }
    if (tasks.some((task) => taskState(`/proc/${entry}/task/${task}/stat`)?.running)) return true;
  }
  return false;
}

/** A task's process group and whether it still runs (a zombie, dead but not yet reaped, does not). */
function taskState(statFile: string): { group: number; running: boolean } | undefined {
  let stat: string;
  try {
    stat = readFileSync(statFile, "utf8");
  } catch {
    return undefined; // it ended while we looked
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so read after the last ")".
  const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { group: Number(pgrp), running: state !== "Z" && state !== "X" };
}

/** Whether something accepts connections on the port, as engines.sh's own check asks before a start. */
function listening({ host, port }: { host: string; port: number }): Promise<boolean> {
  return new Promise((resolvePort) => {
    const socket = connect({ port, host });
    socket.once("connect", () => {
      socket.destroy();
      resolvePort(true);
    });
    socket.once("error", () => resolvePort(false));
  });
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once("error", () => resolvePort(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolvePort(true)));
  });
}

/** The first of three consecutive free ports (engines.sh gives node i the base + i - 1). */
async function freePortRun(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    // Below the kernel's ephemeral range (32768 and up on Linux): a port from it, freed when a node is
    // killed, can be handed to any process's listen(0) — or to a client retrying the dead node, which
    // then connects to itself — and the node could not come back on it.
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    const run = [base, base + 1, base + 2];
    if (run.some((port) => taken.has(port))) continue;
    if ((await Promise.all(run.map(canListen))).every(Boolean)) {
      for (const port of run) taken.add(port);
      return base;
    }
  }
  throw new Error("found no three consecutive free ports for a cluster");
}

function script(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  return new Promise((resolveRun, reject) => {
    execFile("bash", [SCRIPT, ...args], { env, timeout: SCRIPT_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`engines.sh ${args.join(" ")} failed: ${error.message}\n${stderr}`));
      else resolveRun(stdout);
    });
  });
}

/**
 * The addresses a node listens on: node i has each base + i - 1 (its client port and its cluster
 * port), on the host its client address names (a Kafka broker's controller port too; an OpenSearch
 * node on a host of its own keeps its transport on that host's loopback, which is its namespace's).
 */
function nodeAddresses(env: NodeJS.ProcessEnv, node: ClusterNode, clientHost: string, hosts: boolean): { host: string; port: number }[] {
  const [engine, index] = node.split("-") as ["opensearch" | "kafka", string];
  const port = (base: string) => Number(env[base]) + Number(index) - 1;
  if (engine === "kafka") return [port("QUARRY_CLUSTER_KAFKA_PORT"), port("QUARRY_CLUSTER_KAFKA_CONTROLLER_PORT")].map((p) => ({ host: clientHost, port: p }));
  const http = { host: clientHost, port: port("QUARRY_CLUSTER_OPENSEARCH_PORT") };
  return hosts ? [http] : [http, { host: clientHost, port: port("QUARRY_CLUSTER_OPENSEARCH_TRANSPORT_PORT") }];
}

export async function startEngineCluster(options: { hosts?: boolean } = {}): Promise<EngineCluster> {
  const hosts = options.hosts ?? false;
  const runDir = await mkdtemp(join(tmpdir(), "quarry-cluster-"));
  const taken = new Set<number>();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    QUARRY_ENGINES_RUN: runDir,
    QUARRY_ENGINES_CLUSTER: "1",
    QUARRY_CLUSTER_HOSTS: hosts ? "1" : "0",
    QUARRY_CLUSTER_OPENSEARCH_PORT: String(await freePortRun(taken)),
    QUARRY_CLUSTER_OPENSEARCH_TRANSPORT_PORT: String(await freePortRun(taken)),
    QUARRY_CLUSTER_KAFKA_PORT: String(await freePortRun(taken)),
    QUARRY_CLUSTER_KAFKA_CONTROLLER_PORT: String(await freePortRun(taken)),
  };
  const stop = async () => {
    await script(env, ["down"]).catch(() => {});
    await rm(runDir, { recursive: true, force: true });
  };
  try {
    const exports = await script(env, ["up"]);
    const value = (name: string) => new RegExp(`export ${name}=(\\S+)`).exec(exports)?.[1];
    const opensearchUrls = value("OPENSEARCH_URL");
    const kafkaBrokers = value("KAFKA_BROKERS");
    if (!opensearchUrls || !kafkaBrokers) throw new Error(`engines.sh up --cluster printed no addresses:\n${exports}`);
    const clientHost = (node: ClusterNode) => {
      const [engine, index] = node.split("-") as ["opensearch" | "kafka", string];
      const address = (engine === "opensearch" ? opensearchUrls : kafkaBrokers).split(",")[Number(index) - 1]!;
      return new URL(engine === "opensearch" ? address : `tcp://${address}`).hostname;
    };
    return {
      opensearchUrls,
      kafkaBrokers,
      runDir,
      hosts,
      async kill(node) {
        const pid = Number(readFileSync(join(runDir, node, `${node}.pid`), "utf8").trim());
        // engines.sh starts each node in its own session (setsid): the group is the node.
        process.kill(-pid, "SIGKILL");
        // A killed JVM lets go of its ports only once its last thread is gone, which under load takes
        // a while: a restart before that finds its port still taken (engines.sh refuses to start it).
        const addresses = nodeAddresses(env, node, clientHost(node), hosts);
        const deadline = Date.now() + 60_000;
        while (groupAlive(pid) || (await Promise.all(addresses.map(listening))).some(Boolean)) {
          if (Date.now() > deadline) throw new Error(`${node} (process group ${pid}) still ran or held one of ${addresses.map((a) => `${a.host}:${a.port}`).join(", ")} 60 s after kill -9`);
          await new Promise((r) => setTimeout(r, 100));
        }
      },
      async restart(node) {
        await script(env, ["up", node]);
      },
      async cut(node) {
        if (!hosts) throw new Error("cut needs a cluster started with hosts: true");
        await script(env, ["cut", node]);
      },
      async heal(node) {
        if (!hosts) throw new Error("heal needs a cluster started with hosts: true");
        await script(env, ["heal", node]);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
