// `quarry serve all --replicas 2` on the single-node engines (issue 24): two of every service under
// one supervisor. Documents go in through both gateways; a document uploaded through one gateway is
// watched to READY from the other; mid-ingest one gateway and one chunker replica are killed with
// SIGKILL (the supervisor brings them back), while searches and chats run against the surviving
// gateway. Afterwards every document is READY with exactly the chunks its text splits into, no
// search or chat failed, and each stage's events were split across its two replicas (counted from
// each replica's /metrics). The embedder talks to the OpenAI-compatible stub so the run measures
// the replicas, not a model on a loaded CPU.
import { afterAll, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import type { Env, ServiceName } from "../../lib/config.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { waitServing } from "../../lib/testing/wait-serving.ts";
import { replicaPorts } from "../../app/replica-layout.ts";
import { collectChat, upload } from "../e2e/e2e-helpers.ts";
import { cleanUp } from "../support/distributed-quarry.ts";
import { tallyChunks, tallyDocuments } from "./chunk-tally.ts";
import { describeWithAllEngines } from "./engines-all.ts";
import { freeBase, launch, stopProc, type Proc } from "./quarry-process.ts";
import { waitFor } from "./wait-for.ts";
import { handledEvents } from "../support/stage-metrics.ts";

const REPLICAS = 2;
const DOCUMENTS = Number(process.env.QUARRY_REPLICA_TEST_DOCUMENTS ?? 60);
const UPLOADERS = 4;
/** Consumer stages and the stage label their metrics carry. */
const STAGES: ServiceName[] = ["parser", "chunker", "embedder", "index"];
const INHERITED = ["PATH", "HOME", "QUARRY_MODELS_DIR", "TMPDIR", "LANG"];

describeWithAllEngines("quarry serve all --replicas 2", (engines) => {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const opensearchPrefix = `quarry-e2e-${runId}r`;
  const topicPrefix = `replicas.${runId}.`;
  const token = `internal-${runId}-${randomBytes(12).toString("hex")}`;
  let dataDir: string | undefined;
  let stub: OpenAiStub | undefined;
  let all: Proc | undefined;

  afterAll(async () => {
    if (all) await stopProc(all, 60_000);
    await stub?.close();
    await cleanUp(engines, opensearchPrefix, topicPrefix);
    if (dataDir && process.env.QUARRY_KEEP_E2E_LOGS !== "1") await rm(dataDir, { recursive: true, force: true });
  }, 120_000);

  it("ingests through both gateways, watches from either, survives a gateway and a chunker killed mid-ingest, and splits each stage's work", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "quarry-replicas-"));
    stub = await startOpenAiStub({ embeddingDimension: 384 });
    const base = await freeBase(6 * REPLICAS);
    const env: Env = {
      ...Object.fromEntries(INHERITED.map((name) => [name, process.env[name]])),
      OPENSEARCH_URL: engines.opensearchUrl,
      KAFKA_BROKERS: engines.kafkaBrokers,
      TIKA_URL: engines.tikaUrl,
      QUARRY_OPENSEARCH_PREFIX: opensearchPrefix,
      QUARRY_TOPIC_PREFIX: topicPrefix,
      QUARRY_DATA_DIR: dataDir,
      QUARRY_INTERNAL_TOKEN: token,
      QUARRY_EMBEDDING_PROVIDER: "openai",
      QUARRY_EMBEDDING_BASE_URL: stub.url,
      QUARRY_EMBEDDING_MODEL: "stub-hashing",
      QUARRY_EMBEDDING_DIMENSION: "384",
    };
    const ports = replicaPorts({ QUARRY_BASE_PORT: String(base) }, REPLICAS);
    const proc = launch(["serve", "all", "--replicas", String(REPLICAS), "--port", String(base)], env, join(dataDir, "serve-all.log"));
    all = proc;
    const url = (port: number) => `http://127.0.0.1:${port}`;
    const tail = () => proc.lines.slice(-30).join("\n");
    for (const [name, list] of Object.entries(ports)) {
      for (const [r, port] of list.entries()) await waitServing({ name: `${name}-${r + 1}`, url: url(port) }, 600_000).catch((e: Error) => Promise.reject(new Error(`${e.message}\n${tail()}`)));
    }
    const gateways: QuarryClient[] = ports.gateway.map((port) => createClient(QuarryService, createConnectTransport({ baseUrl: url(port), httpVersion: "1.1" })));
    const [survivor, doomed] = gateways as [QuarryClient, QuarryClient];
    const pidOf = async (label: string, after = 0) => Number(/started \(pid (\d+)\)/.exec(await proc.line(new RegExp(`^quarry +\\| ${label} started \\(pid \\d+\\)`), 30_000, after))![1]);

    const kb = (await survivor.createKnowledgeBase({ name: `replicas-${runId}` })).knowledgeBase!.id;
    const texts = tallyDocuments(DOCUMENTS);
    const names = [...texts.keys()];

    // A document uploaded through each gateway, watched to READY from the other one.
    const watchFrom = async (watcher: QuarryClient, id: string) => {
      let last = DocumentStatus.UNSPECIFIED;
      for await (const update of watcher.watchIngestion({ documentIds: [id] }, { timeoutMs: 180_000 })) last = update.status;
      return DocumentStatus[last];
    };
    const throughSurvivor = (await upload(survivor, kb, names[0]!, new TextEncoder().encode(texts.get(names[0]!)!))).document!.id;
    const throughDoomed = (await upload(doomed, kb, names[1]!, new TextEncoder().encode(texts.get(names[1]!)!))).document!.id;
    const crossWatches = Promise.all([watchFrom(doomed, throughSurvivor), watchFrom(survivor, throughDoomed)]);
    expect(await crossWatches, "WatchIngestion from the gateway that did not take the upload").toEqual(["READY", "READY"]);

    // The rest alternately through both gateways; one the doomed gateway fails is retried on the survivor.
    const ids = new Map<string, string>([[throughSurvivor, names[0]!], [throughDoomed, names[1]!]]);
    const took = [1, 1];
    let retriedOnSurvivor = 0;
    let next = 2;
    const uploader = async () => {
      while (next < names.length) {
        const i = next++;
        const name = names[i]!;
        const content = new TextEncoder().encode(texts.get(name)!);
        const first = i % 2;
        try {
          ids.set((await upload(gateways[first]!, kb, name, content)).document!.id, name);
          took[first]!++;
        } catch (error) {
          if (first === 0) throw error;
          retriedOnSurvivor++;
          ids.set((await upload(survivor, kb, name, content)).document!.id, name);
          took[0]!++;
        }
      }
    };
    const uploading = Promise.all(Array.from({ length: UPLOADERS }, uploader));

    // Searches and chats against the surviving gateway throughout; none may fail.
    let asking = true;
    const asked = { searches: 0, chats: 0, failures: [] as string[] };
    const askLoop = (async () => {
      while (asking) {
        try {
          asked.searches++;
          await survivor.search({ query: "lock keeper", knowledgeBases: [kb] });
          asked.chats++;
          await collectChat(survivor, { question: "What does the lock keeper's log say about the canal?", knowledgeBases: [kb] });
        } catch (error) {
          asked.failures.push((error as Error).message.slice(0, 200));
        }
        await new Promise((r) => setTimeout(r, 300));
      }
    })();

    await waitFor(`${DOCUMENTS / 3} uploads`, async () => (ids.size >= DOCUMENTS / 3 ? true : undefined), 300_000);
    const mark = proc.lines.length;
    const gatewayPid = await pidOf("gateway-2");
    const chunkerPid = await pidOf("chunker-2");
    process.kill(gatewayPid, "SIGKILL");
    process.kill(chunkerPid, "SIGKILL");
    await proc.line(/^quarry +\| gateway-2 exited \(signal SIGKILL\); restarting in/, 30_000, mark);
    await proc.line(/^quarry +\| chunker-2 exited \(signal SIGKILL\); restarting in/, 30_000, mark);
    expect(await pidOf("gateway-2", mark)).not.toBe(gatewayPid);
    expect(await pidOf("chunker-2", mark)).not.toBe(chunkerPid);
    await uploading;

    const documents = await waitFor(
      `all ${DOCUMENTS} documents READY`,
      async () => {
        const { documents } = await survivor.listDocuments({ knowledgeBase: kb });
        return documents.length === DOCUMENTS && documents.every((d) => d.status === DocumentStatus.READY) ? documents : undefined;
      },
      480_000,
    ).catch(async (error: Error) => {
      const { documents } = await survivor.listDocuments({ knowledgeBase: kb });
      const notReady = documents.filter((d) => d.status !== DocumentStatus.READY).slice(0, 10);
      throw new Error(`${error.message}: ${documents.length} listed; not ready: ${notReady.map((d) => `${d.fileName} ${DocumentStatus[d.status]} ${d.errorMessage}`).join("; ")}\n${tail()}`);
    });
    asking = false;
    await askLoop;

    const { lost, duplicated, mismatches } = await tallyChunks(survivor, engines.opensearchUrl, opensearchPrefix, kb, documents, texts);
    const split = Object.fromEntries(await Promise.all(STAGES.map(async (stage) => [stage, await Promise.all(ports[stage].map((port) => handledEvents(url(port), token, stage)))] as const)));
    console.info(
      [
        `serve all --replicas ${REPLICAS}: ${DOCUMENTS} documents, ${documents.length} READY, ${lost} lost chunks, ${duplicated} duplicated chunks`,
        `uploads taken by gateway-1 / gateway-2: ${took.join(" / ")} (${retriedOnSurvivor} retried on gateway-1 after gateway-2's kill)`,
        `searches ${asked.searches}, chats ${asked.chats}, failed ${asked.failures.length} (against gateway-1 throughout)`,
        `events handled per replica (since each replica's last start): ${STAGES.map((s) => `${s} ${split[s]!.join(" / ")}`).join(", ")}`,
      ].join("\n"),
    );

    expect(mismatches.slice(0, 10), "chunks per document against the expected split").toEqual([]);
    expect(documents.map((d) => ids.get(d.id)).sort()).toEqual([...names].sort());
    expect(took[1], "uploads gateway-2 took before its kill").toBeGreaterThan(1);
    expect(asked.failures, "searches and chats against the surviving gateway").toEqual([]);
    expect(asked.chats).toBeGreaterThan(0);
    // Every replica of every stage handled some of the work (the killed chunker's count starts again at its restart).
    for (const stage of STAGES) for (const [r, count] of split[stage]!.entries()) if (!(stage === "chunker" && r === 1)) expect(count, `${stage}-${r + 1} handled events`).toBeGreaterThan(0);
  }, 1_200_000);
});
