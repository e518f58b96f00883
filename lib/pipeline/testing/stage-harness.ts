// A stage's surroundings for its worker test: a SQLite event bus in a temp file, and a recorder of
// what the stage publishes (its output topic and ingestion.progress), read back as decoded events.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { IngestionProgressSchema, type IngestionProgress } from "../../../gen/quarry/events/v1/events_pb.ts";
import { Topics, type BusMessage, type Subscription } from "../../bus/event-bus.ts";
import { SqliteEventBus } from "../../bus/sqlite-event-bus.ts";

export interface StageHarness {
  bus: SqliteEventBus;
  publish<S extends DescMessage>(topic: string, schema: S, event: MessageShape<S>, key?: string): Promise<void>;
  /** The first event on the topic that matches, waiting for it up to timeoutMs. */
  next<S extends DescMessage>(topic: string, schema: S, match?: (event: MessageShape<S>) => boolean, timeoutMs?: number): Promise<MessageShape<S>>;
  /** Every progress event recorded so far. */
  progress(): IngestionProgress[];
  /** Waits for a progress event that matches. */
  nextProgress(match: (p: IngestionProgress) => boolean, timeoutMs?: number): Promise<IngestionProgress>;
  close(): Promise<void>;
}

export async function stageHarness(recordTopics: string[]): Promise<StageHarness> {
  const dir = await mkdtemp(join(tmpdir(), "quarry-stage-"));
  const bus = new SqliteEventBus(join(dir, "bus.db"), { pollIntervalMs: 10 });
  const recorded = new Map<string, BusMessage[]>();
  const subscriptions: Subscription[] = [];
  for (const topic of new Set([...recordTopics, Topics.ingestionProgress])) {
    recorded.set(topic, []);
    subscriptions.push(await bus.subscribe({ group: `test.recorder.${topic}`, topics: [topic], handler: async (m) => void recorded.get(topic)!.push(m) }));
  }
  const next: StageHarness["next"] = async (topic, schema, match = () => true, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const message of recorded.get(topic) ?? []) {
        const event = fromBinary(schema, message.value);
        if (match(event)) return event;
      }
      if (Date.now() > deadline) throw new Error(`no matching event on ${topic} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const progress = () => (recorded.get(Topics.ingestionProgress) ?? []).map((m) => fromBinary(IngestionProgressSchema, m.value));
  return {
    bus,
    publish: (topic, schema, event, key = "key") => bus.publish(topic, [{ key, value: toBinary(schema, event) }]),
    next,
    progress,
    nextProgress: (match, timeoutMs) => next(Topics.ingestionProgress, IngestionProgressSchema, match, timeoutMs),
    async close() {
      await Promise.all(subscriptions.map((s) => s.close({ graceMs: 0 })));
      await bus.close({ graceMs: 0 });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
