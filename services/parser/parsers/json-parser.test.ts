import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../lib/errors.ts";
import { parseJson } from "./json-parser.ts";

describe("parseJson", () => {
  it("flattens to one key-path line per value", () => {
    const json = JSON.stringify({ name: "Quarry", tags: ["rag", "search"], owner: { city: "Lyon", active: true, score: 1.5, manager: null }, empty: {}, none: [] });
    expect(parseJson(json).text.split("\n")).toEqual([
      "name: Quarry",
      "tags[0]: rag",
      "tags[1]: search",
      "owner.city: Lyon",
      "owner.active: true",
      "owner.score: 1.5",
      "owner.manager: null",
      "empty: {}",
      "none: []",
    ]);
  });

  it("indexes arrays of records so each field still says which record it belongs to", () => {
    const { text } = parseJson('[{"q":"什么是RAG？","a":"检索增强生成"},{"q":"why","a":"because"}]');
    expect(text).toBe("[0].q: 什么是RAG？\n[0].a: 检索增强生成\n[1].q: why\n[1].a: because");
  });

  it("refuses invalid JSON with the parser's reason", () => {
    expect(() => parseJson('{"a": 1,')).toThrow(InvalidInputError);
    expect(() => parseJson('{"a": 1,')).toThrow(/^not valid JSON: /);
  });
});

describe("parseJson on absurd nesting", () => {
  it("refuses a document nested 100,000 deep at once, with the limit, instead of overflowing the stack", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    expect(() => parseJson(deep)).toThrow(InvalidInputError);
    expect(() => parseJson(deep)).toThrow(/nested more than 256 levels/);
    const objects = '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000);
    expect(() => parseJson(objects)).toThrow(/nested more than 256 levels deep \(at a\.a\.a/);
  });

  it("still reads nesting up to the limit", () => {
    const json = '{"a":'.repeat(200) + '"deep"' + "}".repeat(200);
    expect(parseJson(json).text).toBe(`${Array(200).fill("a").join(".")}: deep`);
  });
});
