// A chat turn's events, passed through unchanged while its answer is measured: time to the first
// text, time to the final event, whether it abstained, and how many of its citations the cited
// chunk did not support. A turn that failed or was abandoned before its final event is not an
// answer and is not counted here (the RPC histogram counts it by its code).
import type { Metrics } from "../../lib/metrics/metrics.ts";
import type { ChatTurnEvent } from "./chat-turn.ts";

export async function* measuredTurn(events: AsyncGenerator<ChatTurnEvent>, metrics: Metrics): AsyncGenerator<ChatTurnEvent> {
  const started = performance.now();
  const since = () => (performance.now() - started) / 1000;
  let firstToken: number | undefined;
  for await (const event of events) {
    if (event.type === "text" && firstToken === undefined && event.delta) firstToken = since();
    // Before the final event goes out, so a client that has it finds the answer counted.
    if (event.type === "final") {
      metrics.answer({
        firstTokenSeconds: firstToken,
        seconds: since(),
        abstained: !event.evidence.answered,
        citations: event.record.markers.resolved,
        unsupportedCitations: event.record.markers.unsupported,
      });
    }
    yield event;
  }
}
