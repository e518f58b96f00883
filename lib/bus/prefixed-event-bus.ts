// Namespaces every topic and consumer group of a bus with a prefix, so several Quarry deployments
// (or test runs) can share one Kafka cluster without reading each other's events. Handlers and
// dead-letter names keep seeing the plain topic names.
import { REJECTED_BY_HEADER, type BusMessage, type CloseOptions, type EventBus, type OutgoingMessage, type PendingCount, type SubscribeOptions, type Subscription } from "./event-bus.ts";

export class PrefixedEventBus implements EventBus {
  constructor(private readonly inner: EventBus, private readonly prefix: string) {}

  ensureTopics(topics: string[]): Promise<void> {
    return this.inner.ensureTopics(topics.map((t) => this.prefix + t));
  }

  publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    return this.inner.publish(this.prefix + topic, messages);
  }

  subscribe(options: SubscribeOptions): Promise<Subscription> {
    return this.inner.subscribe({
      ...options,
      group: this.prefix + options.group,
      topics: options.topics.map((t) => this.prefix + t),
      handler: (message) => options.handler(this.unprefixedMessage(message)),
    });
  }

  async peek(topic: string, limit: number): Promise<BusMessage[]> {
    return (await this.inner.peek(this.prefix + topic, limit)).map((message) => this.unprefixedMessage(message));
  }

  private unprefixedMessage(message: BusMessage): BusMessage {
    const headers = { ...message.headers };
    // Dead letters name the topic and group they came from; handlers see those unprefixed too.
    for (const name of ["x-original-topic", REJECTED_BY_HEADER]) {
      if (headers[name] !== undefined) headers[name] = this.unprefixed(headers[name]);
    }
    return { ...message, topic: this.unprefixed(message.topic), headers };
  }

  private unprefixed(topic: string): string {
    return topic.startsWith(this.prefix) ? topic.slice(this.prefix.length) : topic;
  }

  pending(group: string, topic: string): Promise<PendingCount[]> {
    return this.inner.pending(this.prefix + group, this.prefix + topic);
  }

  close(options?: CloseOptions): Promise<void> {
    return this.inner.close(options);
  }
}
