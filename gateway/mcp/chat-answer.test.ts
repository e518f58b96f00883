// The `ask` result from a Chat stream: text as streamed, each citation's supported flag from the
// checks of its marker, and the answered verdict from the final event, or from the citations when
// the final event carries none.
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

  it("without a verdict in the final event, an answer that cites nothing is not answered", async () => {
    const answer = await collectChatAnswer(stream([{ case: "text", value: { text: "nothing matches" } }, { case: "final", value: {} }]));
    expect(answer.answered).toBe(false);
  });

  it("the final event's own verdict wins over the citations", async () => {
    // What the answer service sends once ChatFinal has its `answered` field (create() keeps only
    // the fields this checkout's contract knows, so the field is set on the message itself).
    const final = message({ case: "final", value: {} });
    Object.assign(final.event!.event.value!, { answered: false });
    const answer = await collectChatAnswer(stream([{ case: "text", value: { text: "Partly [1]." } }, citation(1), final]));
    expect(answer.answered).toBe(false);
  });

  it("a stream that ends before its final event is an error, not a silent half answer", async () => {
    await expect(collectChatAnswer(stream([{ case: "text", value: { text: "Twi" } }]))).rejects.toThrow(/final event/);
  });
});
