import { describe, expect, it } from "vitest";
import { documentInput } from "./document-input.ts";

const text = "Title line\n\nFirst paragraph of the argument.\n\nSecond paragraph follows here.";

function span(index: number, start: number, end: number, sectionPath: string[] = ["Title"]) {
  return { index, start, end, text: text.slice(start, end), sectionPath };
}

describe("documentInput", () => {
  it("joins overlapping chunks into the text once, without a heading path (the text holds its headings)", () => {
    const chunks = [span(0, 0, 45), span(1, 30, text.length)];
    expect(documentInput(chunks)).toBe(text);
  });

  it("puts one line break where the chunks leave a gap, and orders chunks by index", () => {
    const first = span(0, 0, 10);
    const second = span(1, 12, 44);
    expect(documentInput([second, first])).toBe(`${text.slice(0, 10)}\n${text.slice(12, 44)}`);
  });

  it("is a one-chunk document's chunk text", () => {
    const only = span(0, 12, 44, ["A", "B"]);
    expect(documentInput([only])).toBe(only.text);
  });

  it("is empty for no chunks", () => {
    expect(documentInput([])).toBe("");
  });
});
