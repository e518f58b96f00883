// The parser stage against a producer that names files: a documents.submitted event pointing at
// /etc/passwd (directly, by `..`, or through a symlink planted in the allowed folder) is
// dead-lettered with the reason in its headers, never redriven, and its document fails with the
// reason; a reference under QUARRY_FILE_REF_ROOT is parsed. On the SQLite log and on a real Kafka.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentParsedSchema, DocumentSubmittedSchema, IngestionProgressSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { deadLetterTopic, Topics, type BusMessage, type EventBus, type Subscription } from "../../lib/bus/event-bus.ts";
import { PrefixedEventBus } from "../../lib/bus/prefixed-event-bus.ts";
import { SqliteEventBus } from "../../lib/bus/sqlite-event-bus.ts";
import type { KnowledgeBase } from "../../lib/domain.ts";
import { silentLogger } from "../../lib/logger.ts";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { engineAddress } from "../../test/support/engines.ts";
import { BuiltinParser } from "./builtin-parser.ts";
import { startParserWorker } from "./worker.ts";

/** The one knowledge base these submissions name; the index's lookup is not under test here. */
function knowledgeBaseNamed(id: string): KnowledgeBase {
  const chunking = { chunkSize: 200, chunkOverlap: 30 } as KnowledgeBase["chunking"];
  return { id, name: id, description: "", embeddingModel: "", embeddingDimension: 384, chunking, documentCount: 0, chunkCount: 0, tokenCount: 0, createdAt: new Date(), updatedAt: new Date() };
}

interface BusFixture {
  bus: EventBus;
  cleanup(): Promise<void>;
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function describeFileReferences(name: string, open: () => Promise<BusFixture>) {
  describe(`file references on the bus: ${name}`, () => {
    const dir = mkdtempSync(join(tmpdir(), "quarry-fileref-bus-"));
    const root = join(dir, "allowed");
    let fixture: BusFixture;
    const subscriptions: Subscription[] = [];
    const seen = { dead: [] as BusMessage[], parsed: [] as BusMessage[], progress: [] as BusMessage[] };
    const run = randomBytes(4).toString("hex");

    beforeAll(async () => {
      mkdirSync(root);
      writeFileSync(join(root, "notes.txt"), "Allowed notes: the quarry opens at dawn.");
      symlinkSync("/etc/passwd", join(root, "planted-link.txt"));
      fixture = await open();
      const { bus } = fixture;
      await bus.ensureTopics([...Object.values(Topics), deadLetterTopic(Topics.documentsSubmitted)]);
      const collect = (topic: string, into: BusMessage[]) =>
        bus.subscribe({ group: `collect-${topic}-${run}`, topics: [topic], from: "earliest", handler: async (m) => void into.push(m) });
      subscriptions.push(await collect(deadLetterTopic(Topics.documentsSubmitted), seen.dead));
      subscriptions.push(await collect(Topics.documentsParsed, seen.parsed));
      subscriptions.push(await collect(Topics.ingestionProgress, seen.progress));
      // A short redrive delay: a dead letter that was going to be redriven would be back within the test.
      subscriptions.push(
        await startParserWorker({
          bus,
          parser: new BuiltinParser(),
          knowledgeBase: async (id) => knowledgeBaseNamed(id),
          logger: silentLogger,
          redrive: { maxRedrives: 3, delayMs: 100, maxDelayMs: 200 },
          fileRefRoots: [root],
        }),
      );
    }, 90_000);
    afterAll(async () => {
      for (const s of subscriptions) await s.close();
      await fixture?.cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    const submit = async (documentId: string, fileName: string, uri: string) => {
      const event = create(DocumentSubmittedSchema, { documentId, knowledgeBaseId: "kb_fileref", fileName, version: 1n, content: { case: "contentUri", value: uri } });
      await fixture.bus.publish(Topics.documentsSubmitted, [{ key: documentId, value: toBinary(DocumentSubmittedSchema, event) }]);
    };
    const failureOf = (documentId: string) =>
      seen.progress.map((m) => fromBinary(IngestionProgressSchema, m.value)).find((p) => p.documentId === documentId && p.phase === DocumentStatus.FAILED)?.error;

    it("dead-letters /etc/passwd, a .. escape and a planted symlink with the reason, and fails their documents", async () => {
      const refused = {
        [`passwd-${run}`]: "file:///etc/passwd",
        [`dotdot-${run}`]: `file://${root}/../../../../../../etc/passwd`,
        [`symlink-${run}`]: pathToFileURL(join(root, "planted-link.txt")).href,
      };
      for (const [id, uri] of Object.entries(refused)) await submit(id, "passwd.txt", uri);
      await submit(`allowed-${run}`, "notes.txt", pathToFileURL(join(root, "notes.txt")).href);

      const parsed = await until("the allowed file parsed", () => seen.parsed.find((m) => m.key === `allowed-${run}`));
      expect(fromBinary(DocumentParsedSchema, parsed.value).parsed?.text).toContain("the quarry opens at dawn");

      for (const id of Object.keys(refused)) {
        const letter = await until(`the dead letter of ${id}`, () => seen.dead.find((m) => m.key === id));
        expect(letter.headers["x-error"], id).toMatch(/^file reference refused: .* is outside the allowed folders \(QUARRY_FILE_REF_ROOT\)$/);
        expect(letter.headers["x-original-topic"]).toBe(Topics.documentsSubmitted);
        expect(letter.headers["x-rejected-by"]).toBeDefined();
        expect(fromBinary(DocumentSubmittedSchema, letter.value).documentId).toBe(id);
        const error = await until(`the failure of ${id}`, () => failureOf(id));
        expect(error).toMatch(/^parser: file reference refused: .* outside the allowed folders/);
        expect(error).not.toContain("root:x:0:0");
      }
      // Nothing of /etc/passwd reached the next stage.
      expect(seen.parsed.map((m) => m.key).filter((k) => k !== `allowed-${run}`)).toEqual([]);
      expect(seen.parsed.some((m) => Buffer.from(m.value).toString("latin1").includes("root:x:0:0"))).toBe(false);
    }, 60_000);

    it("does not redrive a refused reference: one dead letter each, however long one waits", async () => {
      await new Promise((r) => setTimeout(r, 2_000));
      for (const id of [`passwd-${run}`, `dotdot-${run}`, `symlink-${run}`]) expect(seen.dead.filter((m) => m.key === id), id).toHaveLength(1);
      expect(seen.parsed.filter((m) => m.key.startsWith("passwd-"))).toHaveLength(0);
    });
  });
}

describeFileReferences("SQLite log", async () => {
  const dir = mkdtempSync(join(tmpdir(), "quarry-fileref-sqlite-"));
  const bus = new SqliteEventBus(join(dir, "bus.db"));
  return {
    bus,
    async cleanup() {
      await bus.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

const brokers = engineAddress("KAFKA_BROKERS");
if (brokers) {
  describeFileReferences("Kafka", async () => {
    const { KafkaEventBus } = await import("../../lib/bus/kafka-event-bus.ts");
    const prefix = `test.fileref.${randomBytes(4).toString("hex")}.`;
    const list = brokers.split(",").map((b) => b.trim());
    const inner = new KafkaEventBus({ brokers: list, clientId: "quarry-fileref-test", numPartitions: 1, sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500, rebalanceTimeoutMs: 10_000, maxWaitTimeInMs: 100 });
    return {
      bus: new PrefixedEventBus(inner, prefix),
      async cleanup() {
        await inner.close();
        const admin = new Kafka({ brokers: list, logLevel: logLevel.NOTHING }).admin();
        await admin.connect();
        try {
          const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
          if (topics.length) await admin.deleteTopics({ topics });
          const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(prefix));
          if (groups.length) await admin.deleteGroups(groups).catch(() => undefined);
        } finally {
          await admin.disconnect();
        }
      },
    };
  });
} else {
  describe.skip("file references on the bus: Kafka (skipped: KAFKA_BROKERS not set)", () => {});
}
