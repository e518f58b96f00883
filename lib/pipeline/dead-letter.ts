// A message that no retry can fix and that should not vanish either (someone produced it on
// purpose): it goes to the stage's dead-letter topic at once, its reason in the headers the bus
// itself would write, marked permanent so the redrive consumer leaves it there for a person.
import { deadLetterTopic, type BusMessage, type EventBus } from "../bus/event-bus.ts";

export const PERMANENT_HEADER = "x-permanent";

export async function deadLetterPermanently(bus: EventBus, message: BusMessage, reason: string): Promise<void> {
  await bus.publish(deadLetterTopic(message.topic), [
    {
      key: message.key,
      value: message.value,
      headers: {
        ...message.headers,
        "x-error": reason,
        "x-original-topic": message.topic,
        "x-original-offset": message.offset,
        "x-attempts": "1",
        [PERMANENT_HEADER]: "true",
      },
    },
  ]);
}

export const isPermanentDeadLetter = (message: Pick<BusMessage, "headers">) => message.headers[PERMANENT_HEADER] === "true";
