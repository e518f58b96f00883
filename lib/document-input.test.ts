import { describe, expect, it } from "vitest";
import { withHeadingPath } from "./chunk-context.ts";
import { documentInput } from "./document-input.ts";

const text = "Title line\n\nFirst paragraph of the argument.\n\nSecond paragraph follows here.";

function span(index: number, start: number, end: number, sectionPath: string[] = ["Title"]) {
  return { index, start, end, text: text.slice(start, end), sectionPath };
}

describe("documentInput", () => {
  it("joins overlapping chunks into the text once, under the first chunk's heading path", () => {
    const chunks = [span(0, 0, 45), span(1, 30, text.length)];
    expect(documentInput(chunks)).toBe(withHeadingPath(text, ["Title"]));
  });

  it("puts one line break where the chunks leave a gap, and orders chunks by index", () => {
    const first = span(0, 0, 10);
    const second = span(1, 12, 44);
    expect(documentInput([second, first])).toBe(`Title\n${text.slice(0, 10)}\n${text.slice(12, 44)}`);
  });

  it("is a one-chunk document's chunk input exactly", () => {
    const only = span(0, 12, 44, ["A", "B"]);
    expect(documentInput([only])).toBe(withHeadingPath(only.text, only.sectionPath));
  });

  it("is empty for no chunks", () => {
    expect(documentInput([])).toBe("");
  });
});
