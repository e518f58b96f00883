// What Quarry measures, as the domain records it. Services, stages and the bus record through this
// interface only; the Prometheus registry behind it (prometheus-metrics.ts) is chosen by the
// composition root, so domain code never imports prom-client and tests can pass noMetrics.

/** How one ingestion event ended in a stage. */
export type StageOutcome = "handled" | "failed" | "retrying" | "rejected";

/** What kind of failure it was: the domain error's class ("invalid_input", "unavailable", …), "internal" otherwise. */
export type FailureClass = string;

/** Unconsumed events of one consumer group on one topic partition (the SQLite log has one partition, "0"). */
export interface BacklogRow {
  group: string;
  topic: string;
  partition: string;
  pending: number;
}

/** Reads the bus's backlog when metrics are collected (a scrape or a status call), never on a timer. */
export type BacklogSource = () => Promise<BacklogRow[]>;

export interface Metrics {
  /**
   * One RPC a server answered: its service, method, Connect code name ("ok", "not_found") and
   * duration; its trace id when tracing is on (for the status view's slowest requests).
   */
  rpc(service: string, method: string, code: string, seconds: number, traceId?: string): void;
  /** An ingestion stage took an event (until it ends, the event's document is in flight). */
  stageStarted(stage: string): void;
  /** The event ended: how, after how long, and for a failure its class. */
  stageEnded(stage: string, outcome: StageOutcome, seconds: number, failure?: FailureClass): void;
  /** A stage's event reached its dead-letter topic; `rejected` when no retry could ever handle it. */
  deadLettered(stage: string, rejected: boolean): void;
  /** One call to an embedding model (a forward pass, or one request to an embeddings API): its texts and duration. */
  embedBatch(model: string, texts: number, seconds: number): void;
  /** How long an embed call waited behind other calls' passes before the model took its first texts. */
  embedQueueWait(model: string, seconds: number): void;
  /** One search the index ran: its mode (bm25, vector, hybrid), its backend (sqlite, opensearch, elasticsearch), its duration. */
  search(mode: string, backend: string, seconds: number): void;
  /** A search dropped before it ran because its caller went away (a cancelled request, a passed deadline). */
  searchCancelled(backend: string): void;
  /** One answered question (a chat turn that reached its final event). */
  answer(answer: AnswerMeasure): void;
  /** Where the bus's backlog is read from; one per bus. */
  watchBacklog(source: BacklogSource): void;
  /** What /metrics answers (the Prometheus text format); undefined when nothing is recorded. */
  exposition(): Promise<Exposition | undefined>;
}

export interface AnswerMeasure {
  /** From the question to the answer's first text; undefined when it had none. */
  firstTokenSeconds?: number;
  seconds: number;
  /** The evidence did not support an answer (it said so instead of answering). */
  abstained: boolean;
  /** Markers left in the answer, each checked against the chunk it cites. */
  citations: number;
  /** Of those, the ones whose sentence the chunk does not support. */
  unsupportedCitations: number;
}

export interface Exposition {
  contentType: string;
  text: string;
}

/** Records nothing: for tests and tools that assemble services without a registry. */
export const noMetrics: Metrics = {
  rpc() {},
  stageStarted() {},
  stageEnded() {},
  deadLettered() {},
  embedBatch() {},
  embedQueueWait() {},
  search() {},
  searchCancelled() {},
  answer() {},
  watchBacklog() {},
  exposition: async () => undefined,
};

const FAILURE_CLASSES = new Set(["InvalidInputError", "NotFoundError", "AlreadyExistsError", "FailedPreconditionError", "UnavailableError", "TooLargeError", "UnauthenticatedError", "PermissionDeniedError"]);

/**
 * A failure's class for a label: the domain error's name in snake case without "Error"
 * ("InvalidInputError" → "invalid_input"), "internal" for anything else, so the label's values stay few.
 */
export function failureClass(error: unknown): FailureClass {
  const name = error instanceof Error ? error.name : "";
  if (!FAILURE_CLASSES.has(name)) return "internal";
  return name.replace(/Error$/, "").replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}
