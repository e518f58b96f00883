// Carries trace context across the event bus: a publish is a producer span whose W3C traceparent
// travels in each message's headers (Kafka record headers; the SQLite log's headers column), and a
// stage's handling of a message is a consumer span that continues that trace. So an upload is one
// trace from the gateway's call through every stage to READY. Watchers (from: "latest") only relay
// what happened and get no spans of their own.
import { context } from "@opentelemetry/api";
import { extractContext, failSpan, injectContext, SpanKind, spansKeptHere, tracer, tracingOn, withContext, withSpanActive } from "../tracing/spans.ts";
import type { BusMessage, CloseOptions, EventBus, OutgoingMessage, PendingCount, SubscribeOptions, Subscription } from "./event-bus.ts";

export class TracedEventBus implements EventBus {
  /** `system` names the bus underneath in span attributes ("kafka" or "sqlite"). */
  constructor(private readonly inner: EventBus, private readonly system: string) {}

  ensureTopics(topics: string[]): Promise<void> {
    return this.inner.ensureTopics(topics);
  }

  pending(group: string, topic: string): Promise<PendingCount[]> {
    return this.inner.pending(group, topic);
  }

  peek(topic: string, limit: number): Promise<BusMessage[]> {
    return this.inner.peek(topic, limit);
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (!tracingOn()) return this.inner.publish(topic, messages);
    // Below a request the sampler left out: no span, but the consumers learn it was left out.
    if (!spansKeptHere()) return this.inner.publish(topic, carryContext(messages));
    const parent = context.active();
    const span = tracer().startSpan(`send ${topic}`, {
      kind: SpanKind.PRODUCER,
      attributes: { "messaging.system": this.system, "messaging.operation.type": "send", "messaging.destination.name": topic, "messaging.batch.message_count": messages.length },
    }, parent);
    try {
      await withSpanActive(span, parent, () => this.inner.publish(topic, carryContext(messages)));
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (options.from === "latest") return this.inner.subscribe(options);
    return this.inner.subscribe({
      ...options,
      handler: async (message) => {
        if (!tracingOn()) return options.handler(message);
        const parent = extractContext((name) => message.headers[name]);
        if (!withContext(parent, spansKeptHere)) return withContext(parent, () => options.handler(message));
        const span = tracer().startSpan(`process ${message.topic}`, {
          kind: SpanKind.CONSUMER,
          attributes: {
            "messaging.system": this.system,
            "messaging.operation.type": "process",
            "messaging.destination.name": message.topic,
            "messaging.consumer.group.name": options.group,
            "messaging.message.id": message.offset,
            "quarry.document_id": message.key,
          },
        }, parent);
        try {
          await withSpanActive(span, parent, () => options.handler(message));
        } catch (error) {
          failSpan(span, error);
          throw error;
        } finally {
          span.end();
        }
      },
    });
  }

  close(options?: CloseOptions): Promise<void> {
    return this.inner.close(options);
  }
}

/** The messages with the active context in their headers (traceparent, tracestate). */
function carryContext(messages: OutgoingMessage[]): OutgoingMessage[] {
  return messages.map((message) => {
    const headers = { ...message.headers };
    injectContext(headers);
    return { ...message, headers };
  });
}
