// Distributed mode as the README tells a newcomer to run it: each service started on its own with
// only the engines' addresses (plus this run's namespaces and ports), in the worst order — the
// gateway first, the parser last — and then all six at once with `quarry serve all`. Both must
// ingest documents and answer with citations; serve all must bring back a child killed with
// SIGKILL and stop everything, exiting 0, on SIGTERM. Real OpenSearch, Kafka and Tika; ports are
// six consecutive free ones away from the standard 8080–8085 that other Quarrys on this machine use.
import { afterAll, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.ts";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { ServicePorts, type Env, type ServiceName } from "../../lib/config.ts";
import { collectChat, flat, snippetBody, upload, watchAll } from "../e2e/e2e-helpers.ts";
import { cleanUp } from "../support/distributed-quarry.ts";
import { describeWithAllEngines } from "./engines-all.ts";
import { freeBase, launch, portFree, stopProc, type Proc } from "./quarry-process.ts";
import { waitFor } from "./wait-for.ts";

const SERVING_TIMEOUT_MS = 240_000;
const REVERSE: ServiceName[] = ["gateway", "answer", "index", "embedder", "chunker", "parser"];
/** What locates node, the model cache and the home folder; nothing of Quarry's own. */
const INHERITED = ["PATH", "HOME", "QUARRY_MODELS_DIR", "TMPDIR", "LANG"];

/** Facts no other document states, so each answer can only come from its own file. */
const DOCS: Record<string, string> = {
  "lighthouse.md": "# The Quarrel Point lighthouse\n\nThe keeper of the Quarrel Point lighthouse feeds fourteen cats every morning at six.\n",
  "granite.md": "# The north pit\n\nThe north pit yields pink granite, which the masons cut into kerbstones for the harbour road.\n",
  "ferry.md": "# The island ferry\n\nThe island ferry leaves the harbour at half past nine and comes back with the mail at four.\n",
};
const QUESTIONS = [
  { question: "How many cats does the lighthouse keeper feed?", file: "lighthouse.md", phrase: "feeds fourteen cats" },
  { question: "What do the masons cut the pink granite into?", file: "granite.md", phrase: "cut into kerbstones" },
];

const portOf = (base: number, name: ServiceName) => base + ServicePorts[name] - ServicePorts.gateway;

async function healthOf(base: number, name: ServiceName): Promise<Status | string> {
  try {
    const health = createClient(Health, createGrpcTransport({ baseUrl: `http://127.0.0.1:${portOf(base, name)}` }));
    return (await health.check({ service: "" }, { timeoutMs: 2_000 })).status;
  } catch (error) {
    return String(error);
  }
}

/** Waits for SERVING; on a timeout the error carries what each process said last. */
async function waitServing(base: number, name: ServiceName, timeoutMs: number, procs: Record<string, Proc>): Promise<void> {
  await waitFor(`${name} on ${portOf(base, name)} SERVING`, async () => ((await healthOf(base, name)) === Status.SERVING ? true : undefined), timeoutMs).catch(
    (error: Error) => {
      const tails = Object.entries(procs).map(([label, proc]) => `--- ${label} ---\n${proc.lines.slice(-15).join("\n")}`);
      throw new Error(`${error.message}\n${tails.join("\n")}`);
    },
  );
}

/** Ingests DOCS into a new knowledge base through the gateway, then asks QUESTIONS; every answer must cite its file. */
async function ingestAndAsk(base: number, label: string): Promise<void> {
  const client = createClient(QuarryService, createConnectTransport({ baseUrl: `http://127.0.0.1:${base}`, httpVersion: "1.1" }));
  const kb = (await client.createKnowledgeBase({ name: label })).knowledgeBase!.id;
  const ids = new Map<string, string>();
  for (const [file, text] of Object.entries(DOCS)) ids.set((await upload(client, kb, file, Buffer.from(text))).document!.id, file);
  const log = await watchAll(client, [...ids.keys()], 180_000);
  const outcome = [...ids].map(([id, file]) => `${file}: ${DocumentStatus[log.get(id)!.at(-1)?.status ?? 0]} ${log.get(id)!.at(-1)?.error ?? ""}`.trim());
  expect(outcome).toEqual(Object.keys(DOCS).map((file) => `${file}: READY`));
  for (const { question, file, phrase } of QUESTIONS) {
    const chat = await collectChat(client, { question, knowledgeBases: [kb] });
    expect(chat.citations.length, `no citations for "${question}"`).toBeGreaterThan(0);
    const cited = chat.citations.find((c) => c.fileName === file && flat(snippetBody(c.snippet)).includes(phrase));
    expect(cited, `"${question}" cites ${chat.citations.map((c) => `${c.fileName}: ${c.snippet}`).join(" | ")}`).toBeDefined();
    expect(chat.text).toContain(`[${cited!.marker}]`);
  }
}

describeWithAllEngines("Quarry distributed: any start order, and quarry serve all", (engines) => {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const procs: Proc[] = [];
  const runs: { opensearchPrefix: string; topicPrefix: string; dataDir: string }[] = [];

  /** The engines' three exports, plus what keeps this run apart from every other on the machine. */
  async function runEnv(phase: string): Promise<Env> {
    const opensearchPrefix = `quarry-e2e-${runId}${phase}`;
    const topicPrefix = `order.${runId}${phase}.`;
    const dataDir = await mkdtemp(join(tmpdir(), "quarry-order-"));
    runs.push({ opensearchPrefix, topicPrefix, dataDir });
    return {
      ...Object.fromEntries(INHERITED.map((name) => [name, process.env[name]])),
      OPENSEARCH_URL: engines.opensearchUrl,
      KAFKA_BROKERS: engines.kafkaBrokers,
      TIKA_URL: engines.tikaUrl,
      QUARRY_OPENSEARCH_PREFIX: opensearchPrefix,
      QUARRY_TOPIC_PREFIX: topicPrefix,
      QUARRY_DATA_DIR: dataDir,
    };
  }

  afterAll(async () => {
    await Promise.all(procs.map((p) => stopProc(p, 10_000)));
    for (const { opensearchPrefix, topicPrefix } of runs) await cleanUp(engines, opensearchPrefix, topicPrefix);
    if (process.env.QUARRY_KEEP_E2E_LOGS !== "1") for (const { dataDir } of runs) await rm(dataDir, { recursive: true, force: true });
  });

  it("six services started one by one in reverse order (gateway first, parser last) wait for each other, then ingest and answer with citations", async () => {
    const base = await freeBase();
    const env: Env = { ...(await runEnv("a")), QUARRY_BASE_PORT: String(base) };
    const started: Record<string, Proc> = {};
    for (const [i, name] of REVERSE.entries()) {
      const proc = launch(["serve", name], env, join(env.QUARRY_DATA_DIR!, `${name}.log`));
      procs.push(proc);
      started[name] = proc;
      await proc.line(new RegExp(`Quarry ${name} listening on http://127\\.0\\.0\\.1:${portOf(base, name)}`));
      // Everyone started so far is still there; the ones still missing a peer say so on their health check.
      for (const earlier of REVERSE.slice(0, i + 1)) expect(started[earlier].alive(), `${earlier} exited:\n${readFileSync(started[earlier].logFile, "utf8").slice(-2000)}`).toBe(true);
      if (name === "gateway") {
        expect(await healthOf(base, "gateway")).toBe(Status.NOT_SERVING);
        await started.gateway.line(/waiting for the index service at http:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/);
      }
      if (name === "chunker") expect([Status.NOT_SERVING, Status.SERVING]).toContain(await healthOf(base, "chunker"));
    }
    await waitServing(base, "gateway", SERVING_TIMEOUT_MS, started);
    for (const name of REVERSE) expect(await healthOf(base, name), name).toBe(Status.SERVING);

    await ingestAndAsk(base, `order-${runId}`);

    for (const name of REVERSE) expect(await stopProc(started[name]), name).toEqual({ code: 0, signal: null });
  }, 600_000);

  it("quarry serve all runs the six, restarts one killed with SIGKILL, ingests and answers, and stops them all with exit 0 on SIGTERM", async () => {
    const base = await freeBase();
    const env = await runEnv("b");
    const all = launch(["serve", "all", "--port", String(base)], env, join(env.QUARRY_DATA_DIR!, "serve-all.log"));
    procs.push(all);
    await waitServing(base, "gateway", SERVING_TIMEOUT_MS, { all });
    for (const name of REVERSE) expect(await healthOf(base, name), name).toBe(Status.SERVING);
    // Every child's log lines carry its name.
    for (const name of REVERSE) await all.line(new RegExp(`^${name} +\\| Quarry ${name} listening on`));

    const pids = new Set(all.lines.flatMap((l) => [.../started \(pid (\d+)\)/.exec(l)?.slice(1) ?? []]).map(Number));
    expect(pids.size).toBe(6);
    const first = Number(/chunker started \(pid (\d+)\)/.exec(await all.line(/chunker started \(pid \d+\)/))![1]);
    const mark = all.lines.length;
    process.kill(first, "SIGKILL");
    await all.line(/^quarry +\| chunker exited \(signal SIGKILL\); restarting in 1 s$/, 30_000, mark);
    const second = Number(/chunker started \(pid (\d+)\)/.exec(await all.line(/chunker started \(pid \d+\)/, 30_000, mark))![1]);
    expect(second).not.toBe(first);
    pids.add(second);
    // The new chunker rejoins its consumer group once Kafka gives up on the dead one (its session timeout).
    await waitServing(base, "chunker", SERVING_TIMEOUT_MS, { all });

    await ingestAndAsk(base, `serve-all-${runId}`);

    const stopped = await stopProc(all, 60_000);
    expect(stopped, all.lines.filter((l) => l.startsWith("quarry ")).join("\n")).toEqual({ code: 0, signal: null });
    expect(all.lines).toContain("quarry   | all services stopped");
    for (const pid of pids) expect(() => process.kill(pid, 0), `pid ${pid} outlived serve all`).toThrow();
    for (const name of REVERSE) expect(await portFree(portOf(base, name)), `${name}'s port is still taken`).toBe(true);
  }, 600_000);
});
