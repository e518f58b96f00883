// A stage's metrics on the real SQLite bus: what it handled, failed and rejected, its dead letters
// and the backlog, as the Prometheus registry exposes them.
import { create, toBinary } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DocumentSubmittedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { Topics } from "../bus/event-bus.ts";
import { SqliteEventBus } from "../bus/sqlite-event-bus.ts";
import { InvalidInputError } from "../errors.ts";
import { silentLogger } from "../logger.ts";
import { PrometheusMetrics } from "../metrics/prometheus-metrics.ts";
import { deadLettersWaiting, pipelineBacklog } from "./stage-backlog.ts";
import { runStage } from "./stage.ts";

const submitted = (documentId: string) => ({
  key: documentId,
  value: toBinary(DocumentSubmittedSchema, create(DocumentSubmittedSchema, { documentId, knowledgeBaseId: "kb", fileName: "a.txt", version: 1n })),
});
const parser = [{ stage: "parser", topic: Topics.documentsSubmitted }];

describe("a stage's metrics", () => {
  let bus: SqliteEventBus;
  let metrics: PrometheusMetrics;
  beforeEach(() => {
    bus = new SqliteEventBus(":memory:", { pollIntervalMs: 10 });
    metrics = new PrometheusMetrics({ defaultMetrics: false });
    metrics.watchBacklog(() => pipelineBacklog(bus, parser));
  });
  afterEach(() => bus.close());

  it("counts handled, failed and rejected events, the dead letter, and the backlog before and after", async () => {
    await bus.ensureTopics([Topics.documentsSubmitted, Topics.ingestionProgress]);
    await bus.publish(Topics.documentsSubmitted, [submitted("doc-ok"), submitted("doc-bad"), { key: "garbage", value: new Uint8Array([0xff, 0xff, 0xff]) }]);
    const before = (await metrics.exposition()).text;
    expect(before).toContain('quarry_bus_pending_events{group="parser",topic="documents.submitted",partition="0"} 3');

    const stage = await runStage({
      name: "parser",
      bus,
      topic: Topics.documentsSubmitted,
      schema: DocumentSubmittedSchema,
      logger: silentLogger,
      metrics,
      maxAttempts: 1,
      redrive: false,
      documentOf: (e) => ({ documentId: e.documentId, knowledgeBaseId: e.knowledgeBaseId, version: Number(e.version) }),
      handle: async (e) => {
        if (e.documentId === "doc-bad") throw new InvalidInputError("not a document");
      },
    });
    try {
      await expect.poll(async () => (await metrics.stageCounts()).find((s) => s.stage === "parser")?.deadLettered, { timeout: 20_000 }).toBe(1);
      expect(await metrics.stageCounts()).toEqual([{ stage: "parser", handled: 1, failed: 1, retrying: 0, rejected: 1, deadLettered: 1, inFlight: 0 }]);
      const after = (await metrics.exposition()).text;
      expect(after).toContain('quarry_bus_pending_events{group="parser",topic="documents.submitted",partition="0"} 0');
      expect(after).toContain('quarry_stage_failures_total{stage="parser",reason="invalid_input"} 1');
      expect(after).toContain('quarry_stage_dead_lettered_total{stage="parser",kind="rejected"} 1');
      expect(after).toContain('quarry_stage_event_duration_seconds_count{stage="parser",outcome="handled"} 1');
      // Nothing redrives here, so the rejected event waits in the dead-letter topic.
      expect((await deadLettersWaiting(bus, parser)).get("parser")).toBe(1);
    } finally {
      await stage.close();
    }
  });
});
