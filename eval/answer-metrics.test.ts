import { describe, expect, it } from "vitest";
import { answerBody, cmrcF1, cmrcSegments, containsGold, longestCommonRun, median, summarizeAnswers, withoutMarkers, type AnsweredQuery } from "./answer-metrics.ts";

describe("containsGold", () => {
  it("matches after folding width, case and whitespace", () => {
    expect(containsGold("由ＯＭＥＧＡ Force 开发", ["omega force"])).toBe(true);
    expect(containsGold("发行于2009年\n12月3日", ["2009年12月3日"])).toBe(true);
    expect(containsGold("Released in 2009.", ["released  IN 2009"])).toBe(true);
  });

  it("needs the whole gold answer, and any one of several", () => {
    expect(containsGold("光荣开发", ["光荣和ω-force"])).toBe(false);
    expect(containsGold("村雨城是改编来源", ["任天堂游戏谜之村雨城", "村雨城"])).toBe(true);
    expect(containsGold("anything", [""])).toBe(false);
  });
});

describe("cmrcSegments (the scorer's mixed_segmentation with rm_punc)", () => {
  it("splits Chinese into characters, keeps other runs as words and drops CMRC punctuation without splitting there", () => {
    // "-" is dropped before the run is tokenised, so ω-force becomes one word, as in the scorer.
    expect(cmrcSegments("《战国无双3》是由光荣和ω-force开发的。")).toEqual(["战", "国", "无", "双", "3", "是", "由", "光", "荣", "和", "ωforce", "开", "发", "的"]);
    expect(cmrcSegments("The answer is 3.5 KM.")).toEqual(["the", "answer", "is", "3.5", "km", "."]);
  });
});

describe("longestCommonRun", () => {
  it("counts a contiguous run, not a subsequence", () => {
    expect(longestCommonRun(["a", "b", "c", "d"], ["a", "x", "b", "c", "d"])).toBe(3);
    expect(longestCommonRun(["a"], [])).toBe(0);
  });
});

describe("cmrcF1", () => {
  it("scores a long answer holding the gold as CMRC 2018's scorer does", () => {
    // Gold 光 荣 和 ωforce (4); prediction 14 segments; common run 4: P = 4/14, R = 1, F1 = 8/18.
    expect(cmrcF1("《战国无双3》是由光荣和ω-force开发的。", ["光荣和ω-force"])).toBeCloseTo(8 / 18, 10);
    // the answer is 3.5 km . (6) against 3.5 km (2): P = 1/3, R = 1, F1 = 0.5.
    expect(cmrcF1("The answer is 3.5 km.", ["3.5 km"])).toBeCloseTo(0.5, 10);
  });

  it("takes the best gold answer and gives 0 for none in common", () => {
    expect(cmrcF1("村雨城", ["任天堂游戏谜之村雨城", "村雨城"])).toBe(1);
    expect(cmrcF1("完全无关", ["村雨城"])).toBe(0);
    expect(cmrcF1("anything", [])).toBe(0);
  });
});

describe("answerBody", () => {
  it("removes markers and the product's notices, keeping the answer", () => {
    const notice = "摘录式回答（未配置语言模型）：";
    expect(answerBody(`${notice}\n由光荣开发。[1] 后来发行了续作。【2】`, [notice])).toBe("由光荣开发。 后来发行了续作。");
    expect(withoutMarkers("Paris is the capital [1, 2] of France [3].")).toBe("Paris is the capital of France.");
    expect(answerBody("Not a notice line\nanswer", ["notice"])).toBe("Not a notice line\nanswer");
  });
});

describe("median", () => {
  it("takes the middle value, or the mean of the middle two", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});

describe("summarizeAnswers", () => {
  const answered = (over: Partial<AnsweredQuery>): AnsweredQuery => ({
    text: "",
    citedChunkTexts: [],
    resolvedMarkers: 0,
    unsupportedMarkers: 0,
    answered: true,
    firstTokenMs: 10,
    totalMs: 20,
    ...over,
  });

  it("computes every rate over the queries, and the unsupported rate over the resolved markers", () => {
    const m = summarizeAnswers(
      [
        { golds: ["村雨城"], answered: answered({ text: "NOTE\n村雨城。[1]", citedChunkTexts: ["……村雨城……"], resolvedMarkers: 1, firstTokenMs: 5, totalMs: 30 }) },
        { golds: ["雨燕"], answered: answered({ text: "卫星。[1][2]", citedChunkTexts: ["无关", "雨燕卫星"], resolvedMarkers: 2, unsupportedMarkers: 1, firstTokenMs: 15, totalMs: 10 }) },
        { golds: ["abc"], answered: answered({ text: "nothing", firstTokenMs: Number.NaN, totalMs: 50 }) },
      ],
      ["NOTE"],
    );
    expect(m.queries).toBe(3);
    expect(m.answerHitRate).toBeCloseTo(1 / 3, 10);
    expect(m.answerF1).toBeCloseTo(1 / 3, 10); // 1, 0, 0
    expect(m.medianAnswerChars).toBe(4); // "村雨城。" 4, "卫星。" 3, "nothing" 7
    expect(m.citationHitRate).toBeCloseTo(2 / 3, 10);
    expect(m.unsupportedCitationRate).toBeCloseTo(1 / 3, 10);
    expect(m.p50FirstTokenMs).toBe(5); // nearest rank over the two answers that had text
    expect(m.p50TotalMs).toBe(30);
    expect(m.abstainRate).toBe(0);
  });

  it("counts abstentions, and an abstention's closest passages are no citation hit", () => {
    const m = summarizeAnswers(
      [
        { golds: ["雨燕"], answered: answered({ text: "所选知识库没有回答这个问题。", citedChunkTexts: ["雨燕卫星"], answered: false }) },
        { golds: ["雨燕"], answered: answered({ text: "雨燕卫星。[1]", citedChunkTexts: ["雨燕卫星"] }) },
      ],
      [],
    );
    expect(m.abstainRate).toBe(0.5);
    expect(m.citationHitRate).toBe(0.5);
    expect(m.answerHitRate).toBe(0.5);
  });
});
