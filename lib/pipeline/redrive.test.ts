import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { DocumentSubmittedSchema, IngestionProgressSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { Topics, deadLetterTopic, REJECTED_BY_HEADER, RejectedMessageError, type BusMessage } from "../bus/event-bus.ts";
import { SqliteEventBus } from "../bus/sqlite-event-bus.ts";
import { UnavailableError, InvalidInputError } from "../errors.ts";
import { silentLogger } from "../logger.ts";
import { REDRIVES_HEADER, redriveDelayMs, redriveSettings, redrivenHeaders, DEFAULT_REDRIVE } from "./redrive.ts";
import { isRetryingFailure } from "../domain.ts";
import { runStage } from "./stage.ts";

describe("redrive arithmetic", () => {
  it("doubles the delay per redrive up to the cap", () => {
    const s = { maxRedrives: 10, delayMs: 5_000, maxDelayMs: 60_000 };
    expect([0, 1, 2, 3, 4, 9].map((n) => redriveDelayMs(n, s))).toEqual([5_000, 10_000, 20_000, 40_000, 60_000, 60_000]);
  });

  it("drops the dead-letter headers, keeps the rest and counts the redrive", () => {
    const headers = redrivenHeaders({
      headers: { trace: "t1", "x-error": "UnavailableError: Tika down", "x-original-topic": "a", "x-original-offset": "7", "x-attempts": "5", [REDRIVES_HEADER]: "2" },
    });
    expect(headers).toEqual({ trace: "t1", [REDRIVES_HEADER]: "3", "x-last-error": "UnavailableError: Tika down" });
  });

  it("reads its settings from the environment and rejects a cap below the delay", () => {
    expect(redriveSettings({})).toEqual(DEFAULT_REDRIVE);
    expect(redriveSettings({ QUARRY_MAX_REDRIVES: "3", QUARRY_REDRIVE_DELAY_MS: "100" })).toMatchObject({ maxRedrives: 3, delayMs: 100 });
    expect(() => redriveSettings({ QUARRY_REDRIVE_DELAY_MS: "90000" })).toThrow(/QUARRY_REDRIVE_MAX_DELAY_MS/);
  });
});

describe("a stage with redrive, on the SQLite bus", () => {
  let bus: SqliteEventBus;
  const progress: { phase: DocumentStatus; error: string }[] = [];

  beforeEach(async () => {
    bus = new SqliteEventBus(":memory:", { pollIntervalMs: 10 });
    progress.length = 0;
    await bus.subscribe({
      group: "progress-reader",
      topics: [Topics.ingestionProgress],
      handler: async (m) => {
        const p = fromBinary(IngestionProgressSchema, m.value);
        progress.push({ phase: p.phase, error: p.error });
      },
    });
  });

  afterEach(async () => {
    await bus.close();
  });

  const submit = () =>
    bus.publish(Topics.documentsSubmitted, [
      { key: "doc-1", value: toBinary(DocumentSubmittedSchema, create(DocumentSubmittedSchema, { documentId: "doc-1", knowledgeBaseId: "kb", fileName: "a.docx", version: 1n })) },
    ]);

  const until = async (what: string, ok: () => boolean, ms = 5_000) => {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  const stage = (handle: (m: BusMessage) => Promise<void>, redrive = { maxRedrives: 3, delayMs: 50, maxDelayMs: 200 }) =>
    runStage({
      name: "parser",
      bus,
      topic: Topics.documentsSubmitted,
      schema: DocumentSubmittedSchema,
      logger: silentLogger,
      documentOf: (e) => ({ documentId: e.documentId, knowledgeBaseId: e.knowledgeBaseId, version: Number(e.version) }),
      handle: (_e, m) => handle(m),
      maxAttempts: 2,
      retryBackoffMs: 1,
      redrive,
    });

  it("puts a dead letter back on its topic after the delay, and the stage then handles it", async () => {
    let backendUp = false;
    const seen: string[] = [];
    const sub = await stage(async (m) => {
      seen.push(m.headers[REDRIVES_HEADER] ?? "0");
      if (!backendUp) throw new UnavailableError("Tika is unreachable");
    });
    await submit();
    await until("the first dead letter", () => seen.length >= 2);
    backendUp = true;
    await until("a redriven delivery", () => seen.includes("1"));
    await sub.close();
    expect(seen.slice(0, 3)).toEqual(["0", "0", "1"]);
    // The failures were reported as still retrying; nothing reported a final failure.
    expect(progress.filter((p) => p.phase === DocumentStatus.FAILED).every((p) => isRetryingFailure(p.error))).toBe(true);
  });

  it("gives up after the cap: the message stays dead and the document is reported failed for good", async () => {
    let deliveries = 0;
    const sub = await stage(async () => {
      deliveries++;
      throw new UnavailableError("Tika is unreachable");
    }, { maxRedrives: 2, delayMs: 10, maxDelayMs: 20 });
    await submit();
    await until("a final failure", () => progress.some((p) => p.phase === DocumentStatus.FAILED && /gave up after 2 redrives/.test(p.error)));
    await sub.close();
    // 2 attempts per life, 3 lives: the first and two redrives.
    expect(deliveries).toBe(6);
    const final = progress.at(-1)!;
    expect(final.error).toMatch(/^parser: UnavailableError: Tika is unreachable \(gave up after 2 redrives\)$/);
    expect(isRetryingFailure(final.error)).toBe(false);
  });

  it("never redrives the input's fault: it fails the document once and dead-letters nothing", async () => {
    let deliveries = 0;
    const sub = await stage(async () => {
      deliveries++;
      throw new InvalidInputError("not a docx");
    });
    await submit();
    await until("the failure", () => progress.some((p) => p.phase === DocumentStatus.FAILED));
    await new Promise((r) => setTimeout(r, 200));
    await sub.close();
    expect(deliveries).toBe(1);
    expect(progress.map((p) => p.error)).toEqual(["parser: not a docx"]);
    const dead = bus.db.prepare("select count(*) as n from bus_messages where topic = ?").get(deadLetterTopic(Topics.documentsSubmitted)) as { n: number } | undefined;
    expect(dead?.n ?? 0).toBe(0);
  });

  /** Everything that reaches the stage's dead-letter topic. */
  const deadLetters = async () => {
    const letters: BusMessage[] = [];
    await bus.subscribe({ group: "dlq-reader", topics: [deadLetterTopic(Topics.documentsSubmitted)], handler: async (m) => void letters.push(m) });
    return letters;
  };

  it("dead-letters an undecodable event at once with the reason, and never redrives it", async () => {
    let deliveries = 0;
    const sub = await stage(async () => void deliveries++, { maxRedrives: 3, delayMs: 10, maxDelayMs: 20 });
    const letters = await deadLetters();
    // Not a DocumentSubmitted: field 1 as a varint, then a length running past the end.
    await bus.publish(Topics.documentsSubmitted, [{ key: "outside-1", value: Uint8Array.from([0x08, 0x96, 0x01, 0x12, 0x7f, 0x41]) }]);
    await until("the dead letter", () => letters.length === 1);
    // Three redrive delays and more: a redrive would have republished it by now.
    await new Promise((r) => setTimeout(r, 300));
    await sub.close();
    expect(deliveries).toBe(0);
    expect(letters).toHaveLength(1);
    const [letter] = letters;
    expect(letter.key).toBe("outside-1");
    expect(letter.headers["x-error"]).toMatch(/^the payload on documents\.submitted is not a quarry\.events\.v1\.DocumentSubmitted: /);
    expect(letter.headers[REJECTED_BY_HEADER]).toBe("parser");
    expect(letter.headers["x-attempts"]).toBe("1");
    const onTopic = bus.db.prepare("select count(*) as n from bus_messages where topic = ?").get(Topics.documentsSubmitted) as { n: number };
    expect(onTopic.n).toBe(1);
  });

  it("a handler's rejection fails the document with the reason and dead-letters the event, without retries", async () => {
    let deliveries = 0;
    const sub = await stage(async () => {
      deliveries++;
      throw new RejectedMessageError("knowledge base kb does not exist");
    }, { maxRedrives: 3, delayMs: 10, maxDelayMs: 20 });
    const letters = await deadLetters();
    await submit();
    await until("the dead letter", () => letters.length === 1);
    await new Promise((r) => setTimeout(r, 300));
    await sub.close();
    expect(deliveries).toBe(1);
    expect(letters[0].headers["x-error"]).toBe("knowledge base kb does not exist");
    expect(progress).toEqual([{ phase: DocumentStatus.FAILED, error: "parser: knowledge base kb does not exist" }]);
  });
});
