import { describe, expect, it } from "vitest";
import { correctionDocumentText, parseCorrectionText, questionWordings } from "./correction-document.ts";

describe("a correction as a document", () => {
  it("reads back the wordings and the answer it was written with", () => {
    const text = correctionDocumentText(["How often is the lamp serviced?", "How frequently is the lamp maintained?"], "Every 14 days.\n\nThe keeper logs it.\n");
    expect(text).toBe("Question: How often is the lamp serviced?\nQuestion: How frequently is the lamp maintained?\n\nAnswer: Every 14 days.\n\nThe keeper logs it.\n");
    expect(parseCorrectionText(text)).toEqual({ questions: ["How often is the lamp serviced?", "How frequently is the lamp maintained?"], answer: "Every 14 days.\n\nThe keeper logs it." });
  });

  it("splits wordings by line, collapsing spaces and dropping blanks and repeats", () => {
    expect(questionWordings("  How   often?\r\n\nHow often?\nWhen?  ")).toEqual(["How often?", "When?"]);
  });

  it("finds no question in text that does not start with one", () => {
    expect(parseCorrectionText("The keeper logs it.")).toBeUndefined();
    expect(parseCorrectionText("Answer: only")).toBeUndefined();
  });
});
