// Which consumer group reads which topic in the ingestion pipeline, so the backlog (pending events,
// Kafka's consumer lag) and the dead letters can be read for every stage from any process that has
// the bus — the gateway's status RPC and each service's /metrics alike.
import { deadLetterTopic, Topics, type EventBus } from "../bus/event-bus.ts";
import type { BacklogRow } from "../metrics/metrics.ts";

export interface PipelineConsumer {
  /** The stage as metrics and status name it; also its consumer group. */
  stage: string;
  topic: string;
}

export const PIPELINE_CONSUMERS: readonly PipelineConsumer[] = [
  { stage: "parser", topic: Topics.documentsSubmitted },
  { stage: "chunker", topic: Topics.documentsParsed },
  { stage: "embedder", topic: Topics.chunksCreated },
  { stage: "index", topic: Topics.chunksEmbedded },
  { stage: "index.status", topic: Topics.ingestionProgress },
];

/** The pending events of the given consumers, per partition. */
export async function pipelineBacklog(bus: EventBus, consumers: readonly PipelineConsumer[] = PIPELINE_CONSUMERS): Promise<BacklogRow[]> {
  const rows = await Promise.all(
    consumers.map(async ({ stage, topic }) => (await bus.pending(stage, topic)).map((p) => ({ group: stage, topic, partition: p.partition, pending: p.pending }))),
  );
  return rows.flat();
}

/**
 * Dead letters waiting in each stage's dead-letter topic: those its redrive consumer has not taken
 * back yet. (One out of redrives is consumed and stays in the topic; the dead-lettered counter
 * counts every arrival.)
 */
export async function deadLettersWaiting(bus: EventBus, consumers: readonly PipelineConsumer[] = PIPELINE_CONSUMERS): Promise<Map<string, number>> {
  const counts = await Promise.all(
    consumers.map(async ({ stage, topic }) => [stage, sum(await bus.pending(`${stage}.redrive`, deadLetterTopic(topic)))] as const),
  );
  return new Map(counts);
}

const sum = (rows: { pending: number }[]) => rows.reduce((total, row) => total + row.pending, 0);
