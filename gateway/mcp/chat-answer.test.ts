// The `ask` result from a Chat stream: text as streamed, each citation's supported flag from the
// checks of its marker, and the answered verdict and its reason from the final event.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { ChatResponseSchema as AnswerEventSchema } from "../../gen/quarry/answer/v1/answer_pb.ts";
import { ChatResponseSchema, type ChatResponse } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { collectChatAnswer } from "./chat-answer.ts";

type Event = NonNullable<MessageInitShape<typeof AnswerEventSchema>["event"]>;

function message(event: Event): ChatResponse {
  return create(ChatResponseSchema, { event: { event } });
}

async function* stream(events: (Event | ChatResponse)[]): AsyncIterable<ChatResponse> {
  for (const event of events) yield "$typeName" in event ? event : message(event);
}

const citation = (marker: number) => ({ case: "citation" as const, value: { marker, chunkId: `c${marker}`, documentId: "d1", fileName: "a.md", page: 2, sectionPath: ["Fog"], snippet: "…", score: 0.5 } });

describe("collectChatAnswer", () => {
  it("joins the text, and marks a citation supported only when every check of its marker is", async () => {
    const answer = await collectChatAnswer(
      stream([
        { case: "started", value: { conversationId: "cv1", turnId: "tn1" } },
        { case: "text", value: { text: "Twice [1]. " } },
        { case: "text", value: { text: "Ninety seconds [2][1]. Also [3]." } },
        citation(1),
        citation(2),
        citation(3),
        {
          case: "final",
          value: {
            model: "extractive",
            extractive: true,
            answered: true,
            unsupportedMarkers: 1,
            citationChecks: [
              { marker: 1, supported: true },
              { marker: 2, supported: true },
              { marker: 1, supported: false },
            ],
          },
        },
      ]),
    );
    expect(answer.answer).toBe("Twice [1]. Ninety seconds [2][1]. Also [3].");
    expect(answer.citations.map((c) => [c.marker, c.supported])).toEqual([
      [1, false],
      [2, true],
      [3, null],
    ]);
    expect(answer.citations[0]).toMatchObject({ chunk_id: "c1", document_id: "d1", file_name: "a.md", page: 2, section_path: ["Fog"] });
    expect(answer).toMatchObject({ answered: true, conversation_id: "cv1", turn_id: "tn1", extractive: true, unsupported_markers: 1 });
  });

  it("carries the final event's verdict and reason: cited passages are not an answer when it says so", async () => {
    const final = { case: "final" as const, value: { answered: false, answeredReason: "no retrieved sentence holds half of the question's words" } };
    const answer = await collectChatAnswer(stream([{ case: "text", value: { text: "Closest passages, not an answer: [1]" } }, citation(1), final]));
    expect(answer).toMatchObject({ answered: false, answered_reason: "no retrieved sentence holds half of the question's words" });
    expect(answer.citations.map((c) => c.chunk_id)).toEqual(["c1"]);
  });

  it("a stream that ends before its final event is an error, not a silent half answer", async () => {
    await expect(collectChatAnswer(stream([{ case: "text", value: { text: "Twi" } }]))).rejects.toThrow(/final event/);
  });
});
