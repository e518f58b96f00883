// What an outside Kafka producer learns when its submission cannot be ingested: the message lands
// in documents.submitted.dlq with the reason in its headers, where the producer (or kcat) can read
// it, instead of a log line in the parser's output. Quarry runs here in one process with its bus on
// the real broker (a private topic prefix); the producer and the reader are plain kafkajs clients
// that know nothing of Quarry's bus code, as a producer written in any language would be.
import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { Kafka, logLevel, type Consumer, type Producer } from "kafkajs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { DocumentSubmittedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { waitFor } from "./wait-for.ts";

interface Letter {
  key: string;
  value: Buffer;
  headers: Record<string, string>;
}

describeWithEngine("KAFKA_BROKERS", "an outside producer's bad submissions on Kafka", (brokersVariable) => {
  const brokers = brokersVariable.split(",").map((b) => b.trim());
  const prefix = `outside-${randomUUID().slice(0, 8)}.`;
  const kafka = new Kafka({ brokers, clientId: "outside-producer-test", logLevel: logLevel.NOTHING });
  let quarry: EmbeddedQuarryFixture;
  let producer: Producer;
  let reader: Consumer;
  const letters: Letter[] = [];
  let kbId = "";

  const submit = (key: string, value: Uint8Array) =>
    producer.send({ topic: `${prefix}documents.submitted`, messages: [{ key, value: Buffer.from(value) }] });
  const submission = (knowledgeBaseId: string, fileName: string, text: string) =>
    toBinary(DocumentSubmittedSchema, create(DocumentSubmittedSchema, { knowledgeBaseId, fileName, content: { case: "inlineContent", value: new TextEncoder().encode(text) } }));
  const letterFor = (key: string) => waitFor(`a dead letter keyed ${key}`, async () => letters.find((l) => l.key === key), 60_000);

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry({ env: { KAFKA_BROKERS: brokers.join(","), QUARRY_TOPIC_PREFIX: prefix, QUARRY_REDRIVE_DELAY_MS: "200" } });
    kbId = (await quarry.client.createKnowledgeBase({ name: "outside" })).knowledgeBase!.id;
    producer = kafka.producer();
    await producer.connect();
    // Read the dead-letter topic the way kcat -C would: from the beginning, headers as text.
    reader = kafka.consumer({ groupId: `${prefix}test-reader` });
    await reader.connect();
    await reader.subscribe({ topic: `${prefix}documents.submitted.dlq`, fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(Array.isArray(v) ? v.at(-1) : v)]));
        letters.push({ key: message.key?.toString() ?? "", value: message.value ?? Buffer.alloc(0), headers });
      },
    });
  });

  afterAll(async () => {
    await reader?.disconnect().catch(() => {});
    await producer?.disconnect().catch(() => {});
    await quarry?.stop();
    const admin = kafka.admin();
    await admin.connect();
    try {
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
      if (topics.length > 0) await admin.deleteTopics({ topics });
      const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(prefix));
      if (groups.length > 0) await admin.deleteGroups(groups).catch(() => {});
    } finally {
      await admin.disconnect();
    }
  });

  it("a well-formed submission to a knowledge base that exists is ingested (the pipeline is listening)", async () => {
    await submit("good-1", submission(kbId, "granite.md", "# Granite\n\nGranite is an igneous rock of quartz and feldspar.\n"));
    const doc = await waitFor(
      "granite.md ready",
      async () => (await quarry.client.listDocuments({ knowledgeBase: kbId })).documents.find((d) => d.fileName === "granite.md" && d.status === DocumentStatus.READY),
      90_000,
    );
    expect(doc.chunkCount).toBeGreaterThan(0);
    expect(letters.find((l) => l.key === "good-1")).toBeUndefined();
  });

  it("an undecodable payload is dead-lettered with the reason in its headers, byte for byte", async () => {
    const junk = Buffer.from("{\"knowledge_base_id\": \"kb_1\", \"file_name\": \"a.txt\"}\n");
    await submit("junk-1", junk);
    const letter = await letterFor("junk-1");
    expect(letter.value.equals(junk)).toBe(true);
    expect(letter.headers["x-error"]).toMatch(/^the payload on documents\.submitted is not a quarry\.events\.v1\.DocumentSubmitted: /);
    expect(letter.headers["x-rejected-by"]).toBe(`${prefix}parser`);
    expect(letter.headers["x-original-topic"]).toBe(`${prefix}documents.submitted`);
    expect(letter.headers["x-attempts"]).toBe("1");
    expect(letter.headers["x-original-partition"]).toMatch(/^\d+$/);
  });

  it("a submission naming a knowledge base that does not exist is dead-lettered with that reason, and not redriven", async () => {
    await submit("nokb-1", submission("kb_0000000000000000", "orphan.md", "# Orphan\n\nNo home.\n"));
    const letter = await letterFor("nokb-1");
    expect(letter.headers["x-error"]).toBe("knowledge base kb_0000000000000000 does not exist");
    expect(letter.headers["x-rejected-by"]).toBe(`${prefix}parser`);
    // Redrive runs every 200 ms here: a redriven copy would have come back and died again by now.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(letters.filter((l) => l.key === "nokb-1")).toHaveLength(1);
  });

  it("a submission naming the knowledge base by its name is told to use the id", async () => {
    await submit("byname-1", submission("outside", "named.md", "# Named\n\nBy name.\n"));
    const letter = await letterFor("byname-1");
    expect(letter.headers["x-error"]).toBe(`knowledge_base_id must be the knowledge base's id: "outside" is the name of ${kbId}`);
    const { documents } = await quarry.client.listDocuments({ knowledgeBase: kbId });
    expect(documents.map((d) => d.fileName)).toEqual(["granite.md"]);
  });
});
