import { describe, expect, it } from "vitest";
import { countFailures, failureKind, type AnswerTrace } from "./answer-failures.ts";

const passage = "广茂铁路是中国广东省内的一条铁路，全长约364公里，由广东广茂铁路有限责任公司管理运营。";
const other = "茂名市是广东省的一个地级市，位于广东西南部。";
const golds = ["广东广茂铁路有限责任公司"];

function trace(overrides: Partial<AnswerTrace>): AnswerTrace {
  return { retrievedTexts: [passage, other], contextTexts: [passage, other], answerText: "", answered: true, citedTexts: [], ...overrides };
}

describe("failureKind", () => {
  it("is none when the answer holds the gold and cites a passage that does", () => {
    expect(failureKind(trace({ answerText: `${passage}[1]`, citedTexts: [passage] }), golds)).toBeUndefined();
  });

  it("blames retrieval when no candidate holds the gold", () => {
    expect(failureKind(trace({ retrievedTexts: [other], contextTexts: [other], answerText: `${other}[1]`, citedTexts: [other] }), golds)).toBe("not_retrieved");
  });

  it("blames the context when a candidate holds the gold and no context entry does", () => {
    expect(failureKind(trace({ contextTexts: [other], answerText: `${other}[1]`, citedTexts: [other] }), golds)).toBe("not_in_context");
  });

  it("blames the gate when the context holds the gold and the answer abstained", () => {
    expect(failureKind(trace({ answered: false, answerText: "所选知识库没有回答这个问题。" }), golds)).toBe("abstained");
  });

  it("blames the sentence choice when the answer quotes elsewhere", () => {
    expect(failureKind(trace({ answerText: `${other}[1]`, citedTexts: [other] }), golds)).toBe("not_chosen");
  });

  it("blames the cut when a quoted clause holds part of the gold, even with the comma turned into a full stop", () => {
    expect(failureKind(trace({ answerText: "全长约364公里。[1] 由广东广茂铁路[1]", citedTexts: [passage] }), golds)).toBe("cut");
  });

  it("blames the citation when the answer holds the gold and cites no passage that does", () => {
    expect(failureKind(trace({ answerText: `由广东广茂铁路有限责任公司管理运营。[1]`, citedTexts: [other] }), golds)).toBe("wrong_citation");
  });
});

describe("countFailures", () => {
  it("counts every kind, zero for the ones not seen", () => {
    const counts = countFailures(["cut", undefined, "cut", "abstained"]);
    expect(counts).toEqual({ not_retrieved: 0, not_in_context: 0, abstained: 1, not_chosen: 0, cut: 2, wrong_citation: 0 });
  });
});
