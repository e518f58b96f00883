// The claim check (lib/pipeline/stage-payloads.ts) on Kafka with the S3 blob store: a document
// above the default inline limit (1 MiB) goes through the six services as separate processes, the
// stage outputs on the Kafka topics are small events whose payload_uri names an object in the
// bucket (a real SeaweedFS), the document ends READY with every chunk searchable, and deleting it
// removes its stored outputs from the bucket. The embedder talks to the OpenAI-compatible stub.
import { randomBytes } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { ChunksCreatedSchema, ChunksEmbeddedSchema, DocumentParsedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { S3BlobStore } from "../../lib/blobs/s3-blob-store.ts";
import { Topics } from "../../lib/bus/event-bus.ts";
import { DEFAULT_STAGE_INLINE_MAX_BYTES } from "../../lib/pipeline/stage-payloads.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { isRetryingFailure } from "../../lib/domain.ts";
import { upload } from "../e2e/e2e-helpers.ts";
import { startDistributedQuarry, type DistributedQuarry } from "../support/distributed-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { describeWithAllEngines } from "./engines-all.ts";

/** Every message on a topic so far, read from the beginning up to the high watermark. */
async function topicMessages(brokers: string, topic: string): Promise<Uint8Array[]> {
  const kafka = new Kafka({ brokers: brokers.split(","), clientId: "s3-stage-payloads-check", logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const expected = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  if (expected === 0) return [];
  const consumer = kafka.consumer({ groupId: `s3-stage-payloads-check-${randomBytes(4).toString("hex")}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const values: Uint8Array[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${values.length} of ${expected} messages of ${topic} in 60 s`)), 60_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          values.push(new Uint8Array(message.value ?? new Uint8Array()));
          if (values.length >= expected) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    return values;
  } finally {
    await consumer.disconnect();
  }
}

/**
 * The document once READY. A failure marked "(retrying)" is not final (a loaded shared OpenSearch
 * may time out a bulk write, and the stage retries it), so only a final one or the timeout fails.
 */
async function readyOrFinalFailure(q: DistributedQuarry, documentId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const document = (await q.client.getDocument({ documentId })).document!;
    if (document.status === DocumentStatus.READY) return document;
    const final = document.status === DocumentStatus.FAILED && !isRetryingFailure(document.errorMessage);
    if (final || Date.now() > deadline) {
      throw new Error(`${DocumentStatus[document.status]} ${document.errorMessage}\n${q.logTail("embedder")}\n${q.logTail("index")}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** About `bytes` of varied prose: many chunks, none alike. */
function largeText(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `Section ${i}: the ledger of harbour ${i % 97} records ${(i * 31) % 1000} crates of granite and ${(i * 17) % 500} barrels of oil, checked by clerk ${i % 13}.`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

describeWithAllEngines("large stage outputs by reference on Kafka", (engines) =>
  describeWithEngine("S3_ENDPOINT", "with the S3 blob store", (endpoint) => {
    const bucket = process.env.S3_BUCKET ?? "quarry";
    const prefix = `e2e-payloads-${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
    const credentials = { accessKeyId: process.env.S3_ACCESS_KEY_ID ?? "", secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? "" };
    // The test's own view of the bucket, to see what Quarry left there.
    const bucketView = new S3BlobStore({ bucket, prefix: `${prefix}/`, endpoint, region: "us-east-1", credentials, forcePathStyle: true });
    let quarry: DistributedQuarry | undefined;
    let stub: OpenAiStub | undefined;

    beforeAll(async () => {
      stub = await startOpenAiStub({ embeddingDimension: 384 });
      quarry = await startDistributedQuarry({
        ...engines,
        env: {
          QUARRY_BLOB_URL: `s3://${bucket}/${prefix}`,
          S3_ENDPOINT: endpoint,
          S3_ACCESS_KEY_ID: credentials.accessKeyId,
          S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
          QUARRY_EMBEDDING_PROVIDER: "openai",
          QUARRY_EMBEDDING_BASE_URL: stub.url,
          QUARRY_EMBEDDING_MODEL: "stub-hashing",
          QUARRY_EMBEDDING_DIMENSION: "384",
        },
      });
    }, 240_000);

    afterAll(async () => {
      await quarry?.stop();
      await stub?.close();
      await Promise.all((await bucketView.list("")).map((key) => bucketView.delete(key)));
    }, 60_000);

    it("a document above the inline limit arrives READY, its outputs travel as s3:// references, and they are deleted with it", async () => {
      const q = quarry!;
      const kb = (await q.client.createKnowledgeBase({ name: `payloads-${prefix}` })).knowledgeBase!.id;
      const content = new TextEncoder().encode(largeText(DEFAULT_STAGE_INLINE_MAX_BYTES + 256 * 1024));
      expect(content.byteLength).toBeGreaterThan(DEFAULT_STAGE_INLINE_MAX_BYTES);
      const { document } = await upload(q.client, kb, "ledger.txt", content, "text/plain");
      const id = document!.id;

      const ready = await readyOrFinalFailure(q, id, 300_000);
      expect(ready.chunkCount).toBeGreaterThan(100);

      // On the topics: small events naming an object in the bucket that holds the whole output.
      const stored = `payloads/${kb}/${id}/`;
      const outputs: [string, (value: Uint8Array) => { payloadUri: string }][] = [
        [Topics.documentsParsed, (value) => fromBinary(DocumentParsedSchema, value)],
        [Topics.chunksCreated, (value) => fromBinary(ChunksCreatedSchema, value)],
        [Topics.chunksEmbedded, (value) => fromBinary(ChunksEmbeddedSchema, value)],
      ];
      for (const [topic, decode] of outputs) {
        const values = await topicMessages(engines.kafkaBrokers, `${q.topicPrefix}${topic}`);
        expect(values.length, topic).toBeGreaterThan(0);
        for (const value of values) {
          expect(value.byteLength, topic).toBeLessThan(4096);
          const event = decode(value);
          expect(event.payloadUri, topic).toBe(`s3://${bucket}/${prefix}/${stored}${ready.version}.${topic}`);
        }
        const key = `${stored}${ready.version}.${topic}`;
        expect(await bucketView.list(stored), `${topic} not in the bucket`).toContain(key);
        expect((await bucketView.read(key)).byteLength, topic).toBeGreaterThan(DEFAULT_STAGE_INLINE_MAX_BYTES);
      }
      expect(await bucketView.list(stored)).toHaveLength(3);

      // The last chunk is there to be found: the whole text made it through the references.
      const hits = await q.client.search({ query: "ledger of harbour granite crates clerk", knowledgeBases: [kb] });
      expect(hits.hits.length).toBeGreaterThan(0);

      await q.client.deleteDocument({ documentId: id });
      expect(await bucketView.list(stored)).toEqual([]);
    }, 420_000);
  }),
);
