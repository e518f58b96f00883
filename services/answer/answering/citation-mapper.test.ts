import { describe, expect, it } from "vitest";
import { CitationMapper, type MappedEvent } from "./citation-mapper.ts";
import { makeContext } from "../testing/test-hits.ts";

const context = makeContext(["Passwords are reset from Settings.", "Two-factor codes expire after 30 seconds.", "Third.", "Fourth."]);

function run(deltas: string[], chunks = context) {
  const mapper = new CitationMapper(chunks);
  const events: MappedEvent[] = [];
  for (const d of deltas) events.push(...mapper.push(d));
  events.push(...mapper.end());
  const text = events.map((e) => (e.type === "text" ? e.delta : "")).join("");
  const cited = events.flatMap((e) => (e.type === "citation" ? [e.citation.marker] : []));
  return { mapper, events, text, cited };
}

/** Every way of cutting the text into two deltas. */
function allSplits(text: string): string[][] {
  return Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);
}

describe("CitationMapper", () => {
  it("passes text without markers through unchanged", () => {
    expect(run(["Hello ", "world [not a marker] and arr[x]."]).text).toBe("Hello world [not a marker] and arr[x].");
  });

  it("finds a marker however the stream splits it", () => {
    for (const deltas of allSplits("Reset it in Settings [1]. Codes expire [2].")) {
      const { text, cited } = run(deltas);
      expect(text).toBe("Reset it in Settings [1]. Codes expire [2].");
      expect(cited).toEqual([1, 2]);
    }
  });

  it("handles a two-digit marker split across deltas", () => {
    const twelve = makeContext(Array.from({ length: 12 }, (_, i) => `chunk ${i + 1}`));
    const { text, cited, mapper } = run(["See [1", "2] here."], twelve);
    expect(text).toBe("See [12] here.");
    expect(cited).toEqual([12]);
    expect(mapper.dropped).toEqual([]);
  });

  it("drops a marker that is not in the context and counts it", () => {
    for (const deltas of allSplits("Fact [7]. Other fact [1][9].")) {
      const { text, cited, mapper } = run(deltas);
      expect(text).toBe("Fact. Other fact [1].");
      expect(cited).toEqual([1]);
      expect(mapper.dropped).toEqual([7, 9]);
    }
  });

  it("reads lists and adjacent markers, citing each chunk once", () => {
    const { text, cited, mapper } = run(["A [1, 2]. B [2][3]. C [1，4]."]);
    expect(text).toBe("A [1][2]. B [2][3]. C [1][4].");
    expect(cited).toEqual([1, 2, 3, 4]);
    expect(mapper.used).toEqual([1, 2, 3, 4]);
  });

  it("reads full-width brackets and digits that models use in Chinese", () => {
    for (const deltas of allSplits("在设置中重置密码【1】。验证码30秒后过期【２】【5】。")) {
      const { text, cited, mapper } = run(deltas);
      expect(text).toBe("在设置中重置密码[1]。验证码30秒后过期[2]。");
      expect(cited).toEqual([1, 2]);
      expect(mapper.dropped).toEqual([5]);
    }
  });

  it("emits a citation no later than its marker's text", () => {
    const { events } = run(["Reset [", "1] now"]);
    const citationAt = events.findIndex((e) => e.type === "citation");
    const markerAt = events.findIndex((e) => e.type === "text" && e.delta.includes("[1]"));
    expect(citationAt).toBeGreaterThanOrEqual(0);
    expect(citationAt).toBeLessThan(markerAt);
  });

  it("never invents a citation", () => {
    const { cited, mapper } = run(["No sources here, [0] or [] or [5]."]);
    expect(cited).toEqual([]);
    expect(mapper.citations).toEqual([]);
    expect(mapper.dropped).toEqual([0, 5]);
  });

  it("fills the citation from the context chunk", () => {
    const { events } = run(["x [2]"]);
    const citation = events.find((e) => e.type === "citation");
    expect(citation).toMatchObject({
      type: "citation",
      citation: { marker: 2, chunkId: "c2", documentId: "doc-c2", fileName: "c2.txt", snippet: "Two-factor codes expire after 30 seconds." },
    });
  });

  it("flushes an unfinished marker as text at the end", () => {
    expect(run(["Ends with [1"]).text).toBe("Ends with [1");
  });

  it("holds back no more than a possible marker", () => {
    const mapper = new CitationMapper(context);
    expect(mapper.push("Streaming text [")).toEqual([{ type: "text", delta: "Streaming text" }]);
    expect(mapper.push("see]")).toEqual([{ type: "text", delta: " [see]" }]);
  });
});
