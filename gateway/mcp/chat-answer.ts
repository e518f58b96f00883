// An MCP `ask` result from the gateway's Chat stream: the answer text as streamed, its citations
// with whether the verifier found each one's claims supported, and whether the bases answered at all.
import type { ChatFinal } from "../../gen/quarry/answer/v1/answer_pb.ts";
import type { Citation } from "../../gen/quarry/common/v1/common_pb.ts";
import type { ChatResponse } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { citedSource, type CitedSource } from "../cited-source.ts";

export interface ChatAnswer {
  answer: string;
  /** False when the evidence did not support an answer (services/answer/answering/evidence-support.ts). */
  answered: boolean;
  answered_reason: string;
  citations: CitedSource[];
  conversation_id: string;
  turn_id: string;
  model: string;
  extractive: boolean;
  unsupported_markers: number;
  dropped_markers: number;
}

export async function collectChatAnswer(events: AsyncIterable<ChatResponse>): Promise<ChatAnswer> {
  let answer = "";
  const citations: Citation[] = [];
  let started = { conversationId: "", turnId: "" };
  let final: ChatFinal | undefined;
  for await (const { event } of events) {
    const e = event?.event;
    if (e?.case === "text") answer += e.value.text;
    else if (e?.case === "citation") citations.push(e.value);
    else if (e?.case === "started") started = e.value;
    else if (e?.case === "final") final = e.value;
  }
  if (!final) throw new Error("the answer stream ended before its final event; ask again");
  return {
    answer,
    answered: final.answered,
    answered_reason: final.answeredReason,
    citations: citations.map((c) => citedSource(c, final)),
    conversation_id: started.conversationId,
    turn_id: started.turnId,
    model: final.model,
    extractive: final.extractive,
    unsupported_markers: final.unsupportedMarkers,
    dropped_markers: final.droppedMarkers,
  };
}
