// GetSystemStatus in distributed mode counts each stage across every process that runs it: six
// service processes on Kafka, OpenSearch and Tika plus a second chunker and a second embedder. The
// gateway runs no stage, so its counts are the sum of the stage processes' activity reports on the
// bus; the test checks each stage's handled count against the sum of the quarry_stage_events_total
// counters of that stage's processes, read from each one's /metrics, and that both replicas of the
// doubled stages are among the reporting processes. The embedder talks to the OpenAI-compatible stub.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { ConfigResourceTypes, Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { STAGE_ACTIVITY_TOPIC } from "../../lib/pipeline/stage-activity-reports.ts";
import { lastUpdate, upload, watchAll } from "../e2e/e2e-helpers.ts";
import { startDistributedQuarry, type DistributedQuarry, type RunningProcess } from "../support/distributed-quarry.ts";
import { describeWithAllEngines } from "./engines-all.ts";
import { handledEvents } from "../support/stage-metrics.ts";

const STAGES = ["parser", "chunker", "embedder", "index"] as const;
const DOUBLED = ["chunker", "embedder"] as const;
const DOCUMENTS = 8;
/** The services' internal token, which their /metrics ask for too. */
const TOKEN = `status-internal-${randomBytes(12).toString("hex")}`;

describeWithAllEngines("GetSystemStatus of distributed Quarry: stage counts over every replica", (engines) => {
  let stub: OpenAiStub;
  let quarry: DistributedQuarry;
  const replicas: RunningProcess[] = [];

  beforeAll(async () => {
    stub = await startOpenAiStub({ embeddingDimension: 384 });
    quarry = await startDistributedQuarry({
      ...engines,
      env: { QUARRY_INTERNAL_TOKEN: TOKEN, QUARRY_EMBEDDING_PROVIDER: "openai", QUARRY_EMBEDDING_BASE_URL: stub.url, QUARRY_EMBEDDING_MODEL: "stub-hashing", QUARRY_EMBEDDING_DIMENSION: "384" },
    });
    for (const stage of DOUBLED) replicas.push(await quarry.startReplica(stage));
  }, 600_000);

  afterAll(async () => {
    await quarry?.stop();
    await stub?.close();
  }, 120_000);

  it("sums handled, failed and in-flight events of each stage over its processes, replicas included", async () => {
    const kb = (await quarry.client.createKnowledgeBase({ name: `status-${quarry.runId}` })).knowledgeBase!.id;
    const ids: string[] = [];
    for (let n = 0; n < DOCUMENTS; n++) {
      const text = `Lock ${n} on the canal is painted every spring. The keeper of lock ${n} opens the paddles at dawn.`;
      ids.push((await upload(quarry.client, kb, `lock-${n}.txt`, new TextEncoder().encode(text))).document!.id);
    }
    const log = await watchAll(quarry.client, ids, 240_000);
    for (const id of ids) expect(lastUpdate(log, id).status).toBe(DocumentStatus.READY);

    const processesOf = (stage: string) => [quarry.services[stage as keyof typeof quarry.services], ...replicas.filter((r) => r.name === stage)];
    // The reports are published every 5 s: wait until each stage's sum agrees with its processes' own counters.
    const disagreements = async () => {
      const status = await quarry.client.getSystemStatus({});
      const rows = await Promise.all(
        STAGES.map(async (stage) => {
          const row = status.stages.find((s) => s.stage === stage)!;
          const own = (await Promise.all(processesOf(stage).map((p) => handledEvents(p.url, TOKEN, stage)))).reduce((a, b) => a + b, 0);
          const agrees = row.counted && Number(row.handled) === own && row.failed === 0n && row.inFlight === 0n && row.pending === 0n;
          return agrees ? "" : `${stage}: counted ${row.counted}, handled ${row.handled} vs ${own} on its processes' /metrics, failed ${row.failed}, in flight ${row.inFlight}, pending ${row.pending}`;
        }),
      );
      return rows.filter(Boolean);
    };
    await expect.poll(disagreements, { timeout: 60_000, interval: 1_000 }).toEqual([]);

    const status = await quarry.client.getSystemStatus({});
    expect(status.mode).toBe("distributed");
    for (const stage of STAGES) expect(Number(status.stages.find((s) => s.stage === stage)!.handled), stage).toBeGreaterThanOrEqual(DOCUMENTS);
    // Every stage process reports, the second chunker and embedder too; the gateway and answer run no stage.
    const reporting = status.reportingProcesses.map((p) => p.split("@")[0]);
    for (const stage of STAGES) expect(reporting.filter((s) => s === stage).length, `${stage} among ${status.reportingProcesses.join(", ")}`).toBe(DOUBLED.includes(stage as never) ? 2 : 1);
    expect(status.notes).toEqual([]);
    // `quarry status` shows the counts (not "-") and whose they are.
    const { stdout } = await promisify(execFile)(process.execPath, [resolve("bin/quarry.mjs"), "status", "--url", quarry.url], { env: { ...process.env, QUARRY_API_KEY: "" } });
    expect(stdout).toContain(`Stage counts summed over ${STAGES.length + DOUBLED.length} stage processes:`);
    expect(stdout).toMatch(new RegExp(`^chunker +${status.stages.find((s) => s.stage === "chunker")!.handled} +0 `, "m"));

    // The reports' topic keeps an hour, not Kafka's default week.
    const kafka = new Kafka({ brokers: engines.kafkaBrokers.split(","), clientId: "status-topic-check", logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: `${quarry.topicPrefix}${STAGE_ACTIVITY_TOPIC}`, configNames: ["retention.ms"] }],
      });
      expect(resources[0]!.configEntries[0]!.configValue).toBe(String(60 * 60_000));
    } finally {
      await admin.disconnect();
    }
  }, 600_000);
});
