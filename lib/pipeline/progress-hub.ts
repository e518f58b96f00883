// One subscription to ingestion.progress per process, fanned out to every watcher, so a thousand
// WatchIngestion streams cost one consumer, not a thousand consumer-group joins.
import { randomUUID } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { IngestionProgressSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { Topics, type CloseOptions, type EventBus, type Subscription } from "../bus/event-bus.ts";
import type { IngestionProgress } from "../domain.ts";
import { progressFromProto } from "./progress.ts";

/** A stage's progress report, with the file name when the event carries the document's descriptor. */
export type ProgressEvent = IngestionProgress & { fileName?: string };

export type ProgressListener = (event: ProgressEvent) => void;

export class ProgressHub {
  private readonly listeners = new Set<ProgressListener>();
  private subscription?: Subscription;

  constructor(private readonly bus: EventBus, private readonly groupPrefix = "gateway.watch") {}

  async start(): Promise<void> {
    this.subscription = await this.bus.subscribe({
      group: `${this.groupPrefix}.${randomUUID()}`,
      topics: [Topics.ingestionProgress],
      from: "latest",
      handler: async (message) => {
        const p = fromBinary(IngestionProgressSchema, message.value);
        const event: ProgressEvent = { ...progressFromProto(p), fileName: p.descriptor?.fileName };
        for (const listener of this.listeners) listener(event);
      },
    });
  }

  listen(listener: ProgressListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(options?: CloseOptions): Promise<void> {
    await this.subscription?.close(options);
  }
}
