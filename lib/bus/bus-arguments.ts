// What every event bus refuses before it touches its log or its broker, written once for both.
import { InvalidInputError } from "../errors.ts";
import type { SubscribeOptions } from "./event-bus.ts";

export function validTopic(topic: string): string {
  if (!topic || topic.trim() !== topic) throw new InvalidInputError(`invalid topic name ${JSON.stringify(topic)}`);
  return topic;
}

export function checkSubscribeOptions(options: Pick<SubscribeOptions, "topics" | "group">): void {
  if (options.topics.length === 0) throw new InvalidInputError("subscribe needs at least one topic");
  if (!options.group) throw new InvalidInputError("subscribe needs a consumer group");
}
