// The dead letters an operator acts on: what each stage's `<topic>.dlq` holds whose document has not
// ingested since (a later upload or a redrive that worked makes it READY, and the letter leaves the
// list), and sending chosen ones back to their stage's topic. The topics are append-only, so "in the
// queue" is decided per document: its newest dead letter, while the document is FAILED (retrying or
// given up) or, for a rejected submission, unknown to the catalog.
import { deadLetterTopic, REJECTED_BY_HEADER, type BusMessage, type EventBus } from "../../lib/bus/event-bus.ts";
import { RETRYING_MARK, type DocumentRecord } from "../../lib/domain.ts";
import { publishProgress } from "../../lib/pipeline/progress.ts";
import { InvalidInputError, NotFoundError } from "../../lib/errors.ts";
import { PIPELINE_CONSUMERS, type PipelineConsumer } from "../../lib/pipeline/stage-backlog.ts";
import { redrivenHeaders, redrivesOf } from "../../lib/pipeline/redrive.ts";

/** Newest messages read from each dead-letter topic: a page's worth, and a bound on the work per call. */
const READ_PER_TOPIC = 500;

/** Marks a message an operator sent back (beside x-redrives), for whoever reads the topic later. */
export const REDRIVEN_BY_HEADER = "x-redriven-by";

export interface DeadLetterEntry {
  id: string;
  stage: string;
  topic: string;
  documentId: string;
  knowledgeBaseId: string;
  fileName: string;
  /** The catalog's version of the document; 0 when the catalog does not know it. */
  version: number;
  reason: string;
  rejected: boolean;
  redrives: number;
  deadAt: Date;
  message: BusMessage;
}

export interface DeadLetterDeps {
  bus: EventBus;
  /** The document as the catalog has it now; undefined when it does not exist. */
  document(id: string): Promise<DocumentRecord | undefined>;
  consumers?: readonly PipelineConsumer[];
}

export class DeadLetters {
  private readonly consumers: readonly PipelineConsumer[];

  constructor(private readonly deps: DeadLetterDeps) {
    this.consumers = deps.consumers ?? PIPELINE_CONSUMERS;
  }

  /** The dead letters waiting for someone, newest first. */
  async list(): Promise<DeadLetterEntry[]> {
    const newest = new Map<string, DeadLetterEntry>();
    // At once: on Kafka each peek is a consumer group's join and fetch.
    const read = await Promise.all(this.consumers.map(async (consumer) => ({ consumer, messages: await this.deps.bus.peek(deadLetterTopic(consumer.topic), READ_PER_TOPIC) })));
    for (const { consumer, messages } of read) {
      for (const message of messages) {
        const entry = toEntry(consumer, message);
        const seen = newest.get(entry.documentId);
        if (!seen || seen.deadAt <= entry.deadAt) newest.set(entry.documentId, entry);
      }
    }
    const open: DeadLetterEntry[] = [];
    for (const entry of newest.values()) {
      const document = await this.deps.document(entry.documentId);
      if (document === undefined ? !entry.rejected : document.status !== "failed") continue;
      open.push({ ...entry, knowledgeBaseId: document?.knowledgeBaseId ?? entry.knowledgeBaseId, fileName: document?.fileName ?? "", version: document?.version ?? 0 });
    }
    return open.sort((a, b) => b.deadAt.getTime() - a.deadAt.getTime());
  }

  /** Sends the chosen dead letters (or every listed one) back to their stage's topic. */
  async redrive(request: { ids: string[]; all: boolean }): Promise<DeadLetterEntry[]> {
    if (request.all && request.ids.length > 0) throw new InvalidInputError("name dead letters or ask for all of them, not both");
    if (!request.all && request.ids.length === 0) throw new InvalidInputError("name the dead letters to re-drive (their ids from GetSystemStatus), or ask for all");
    const listed = await this.list();
    const chosen = request.all ? listed : request.ids.map((id) => listed.find((entry) => entry.id === id) ?? missing(id));
    for (const entry of chosen) {
      // A document that was given up on is final for its version; this retrying failure reopens it,
      // so the stage's progress moves it on again (services/index/catalog/document-lifecycle.ts).
      if (entry.version > 0) {
        const doc = { documentId: entry.documentId, knowledgeBaseId: entry.knowledgeBaseId, version: entry.version };
        await publishProgress(this.deps.bus, doc, { phase: "failed", percent: 0, error: `${entry.stage}: re-driven by an operator ${RETRYING_MARK}` });
      }
      // redrivenHeaders drops what described its death (x-rejected-by too), so a rejected letter is tried afresh.
      const headers = { ...redrivenHeaders(entry.message), [REDRIVEN_BY_HEADER]: "operator" };
      await this.deps.bus.publish(entry.topic, [{ key: entry.message.key, value: entry.message.value, headers }]);
    }
    return chosen;
  }
}

function missing(id: string): never {
  throw new NotFoundError(`dead letter ${id} is not waiting (its document ingested since, or the id is wrong); GetSystemStatus lists those that are`);
}

function toEntry(consumer: PipelineConsumer, message: BusMessage): DeadLetterEntry {
  return {
    // Kafka's offsets count per partition, so there the partition is part of the name.
    id: message.partition === undefined ? `${consumer.stage}:${message.offset}` : `${consumer.stage}:${message.partition}-${message.offset}`,
    stage: consumer.stage,
    topic: consumer.topic,
    documentId: message.key,
    knowledgeBaseId: "",
    fileName: "",
    version: 0,
    reason: message.headers["x-error"] ?? "unknown error",
    rejected: message.headers[REJECTED_BY_HEADER] !== undefined,
    redrives: redrivesOf(message),
    deadAt: message.timestamp,
    message,
  };
}
