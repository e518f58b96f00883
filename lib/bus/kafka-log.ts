// How loud each kafkajs log entry is in Quarry's log. kafkajs logs at the level of the code that
// noticed something, not at the level of what it means for us: a warning there is often a step of
// a retry loop that then succeeds. The mapping is deliberate, entry by entry.
import { logLevel, type LogEntry } from "kafkajs";

export type QuarryLogLevel = "error" | "warn" | "info" | "debug";

/** Group membership changes that a healthy consumer group goes through whenever a member joins or leaves. */
const GROUP_LIFE = ["The group is rebalancing, re-joining", "The coordinator is not aware of this member, re-joining the group"];

export function kafkaLogLevel(entry: Pick<LogEntry, "namespace" | "level" | "log">): QuarryLogLevel {
  const message = entry.log.message;
  // Every error response a broker sends is logged by the connection before the request's caller
  // sees it; the caller then retries (NOT_LEADER_FOR_PARTITION while a new topic's leader is
  // elected) or throws (TOPIC_ALREADY_EXISTS, which ensureTopics takes as success). A response
  // that is a real failure reaches Quarry as an exception and is logged where it is handled.
  if (entry.namespace === "Connection" && message.startsWith("Response ")) return "debug";
  if (GROUP_LIFE.includes(message)) return "info";
  switch (entry.level) {
    case logLevel.ERROR:
    case logLevel.NOTHING:
      return "error";
    case logLevel.WARN:
      return "warn";
    case logLevel.INFO:
      return "info";
    default:
      return "debug";
  }
}
