// quarry doctor on a distributed deployment (docs/BACKUP.md, "Doctor"): a Quarry whose index is on
// the real OpenSearch passes every check; chunks planted for a document the catalog does not have
// and a document left mid-ingest are reported, repaired (the chunks deleted, the document marked
// failed with its reason) and then pass. On Kafka, a message in a dead-letter topic is counted.
import { randomBytes } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { deadLetters, doctorDistributed } from "../../app/distributed-doctor.ts";
import { STUCK_AFTER_MS, type DoctorFinding } from "../../app/embedded-doctor.ts";
import { openStores, deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { lastUpdate, runQuarryCli, upload, watchAll } from "./e2e-helpers.ts";

const countOf = (findings: DoctorFinding[], check: RegExp) => findings.find((f) => check.test(f.check))!.count;
const open = (findings: DoctorFinding[]) => findings.filter((f) => f.count > 0);

describeWithEngine("OPENSEARCH_URL", "quarry doctor on a Quarry on OpenSearch", (opensearchUrl) => {
  const prefix = `quarry-doctor-${randomBytes(4).toString("hex")}`;
  let env: Record<string, string> = {};
  let kbId = "";
  let dimension = 0;
  const ids: string[] = [];
  let stop: () => Promise<void> = async () => {};

  beforeAll(async () => {
    const quarry = await startEmbeddedQuarry({ env: { OPENSEARCH_URL: opensearchUrl, QUARRY_OPENSEARCH_PREFIX: prefix } });
    stop = () => quarry.stop();
    const kb = (await quarry.client.createKnowledgeBase({ name: "checked" })).knowledgeBase!;
    kbId = kb.id;
    dimension = kb.embeddingDimension;
    for (const [file, text] of [["a.txt", "The ferry leaves at nine."], ["b.txt", "The tide turns at noon."]]) ids.push((await upload(quarry.client, "checked", file, new TextEncoder().encode(text))).document!.id);
    const log = await watchAll(quarry.client, ids);
    for (const id of ids) expect(lastUpdate(log, id).status).toBe(DocumentStatus.READY);
    // The doctor reads what the running Quarry wrote: its OpenSearch indices and its originals.
    env = { OPENSEARCH_URL: opensearchUrl, QUARRY_OPENSEARCH_PREFIX: prefix, QUARRY_DATA_DIR: quarry.dataDir };
  }, 180_000);
  afterAll(async () => {
    await stop();
    await deleteOpenSearchNamespace(opensearchUrl, prefix);
  });

  it("passes a healthy deployment, reports an orphaned chunk and a stuck document, repairs both", async () => {
    const healthy = await doctorDistributed(env);
    expect(open(healthy), JSON.stringify(healthy)).toEqual([]);
    expect(healthy.find((f) => f.check === "messages in dead-letter topics")?.detail).toContain("KAFKA_BROKERS is not set");

    // Damage: a chunk of a document the catalog does not have, and a document left mid-ingest an hour ago.
    const stores = await openStores(env);
    try {
      const text = "Orphaned words nobody owns.";
      await stores.engine.replaceDocumentChunks(kbId, "doc_orphan", "orphan.txt", [
        { id: "orphan-0", documentId: "doc_orphan", knowledgeBaseId: kbId, index: 0, text, tokenCount: 4, page: 0, pageEnd: 0, sectionPath: [], start: 0, end: text.length, vector: new Float32Array(dimension).fill(0.1) },
      ]);
    } finally {
      await stores.close();
    }
    const stale = await fetch(`${opensearchUrl}/${prefix}-catalog/_update/doc:${ids[1]}?refresh=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ doc: { status: "embedding", progress_percent: 60, updated_at: Date.now() - STUCK_AFTER_MS - 60_000 } }),
    });
    expect(stale.status, await stale.text()).toBe(200);

    const sick = await doctorDistributed(env);
    expect(countOf(sick, /^chunks no catalog document owns/)).toBe(1);
    expect(countOf(sick, /^documents stuck/)).toBe(1);
    expect(sick.find((f) => /^documents stuck/.test(f.check))?.detail).toBe("b.txt (embedding)");
    const repaired = await doctorDistributed(env, { repair: true });
    expect(repaired.find((f) => /^chunks no catalog/.test(f.check))?.repaired).toBe("deleted 1 chunk(s)");
    expect(repaired.find((f) => /^documents stuck/.test(f.check))?.repaired).toBe("marked 1 failed with the reason");
    const after = await doctorDistributed(env);
    expect(open(after), JSON.stringify(after)).toEqual([]);
    // The command picks the distributed doctor from the environment (no Kafka or Elasticsearch of the test's own).
    const cli = await runQuarryCli(["doctor"], { ...env, KAFKA_BROKERS: "", ELASTICSEARCH_URL: "" });
    expect(cli.code, cli.stderr + cli.stdout).toBe(0);
    expect(cli.stdout).toContain("ok   chunks no catalog document owns: 0");
    expect(cli.stdout).toContain("ok   documents stuck mid-ingest for over 60 minutes: 0");

    const check = await openStores(env);
    try {
      const doc = await check.catalog.getDocument(ids[1]);
      expect(doc.status).toBe("failed");
      expect(doc.errorMessage).toMatch(/stuck in embedding since .*re-ingest it/);
    } finally {
      await check.close();
    }
  }, 180_000);
});

describeWithEngine("KAFKA_BROKERS", "quarry doctor's dead letters on Kafka", (brokers) => {
  it("counts the messages waiting in Quarry's dead-letter topics, under its topic prefix", async () => {
    const topicPrefix = `doctor-${randomBytes(4).toString("hex")}.`;
    const env = { KAFKA_BROKERS: brokers, QUARRY_TOPIC_PREFIX: topicPrefix };
    expect(await deadLetters(env)).toMatchObject({ count: 0, detail: "" });
    const kafka = new Kafka({ clientId: "doctor-test", brokers: brokers.split(","), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    const topic = `${topicPrefix}documents.parsed.dlq`;
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic, messages: [{ key: "d1", value: "a" }, { key: "d2", value: "b" }] });
      await producer.disconnect();
      expect(await deadLetters(env)).toEqual({ check: "messages in dead-letter topics", count: 2, detail: `${topic}: 2` });
    } finally {
      await admin.deleteTopics({ topics: [topic] }).catch(() => {});
      await admin.disconnect();
    }
  }, 60_000);
});
