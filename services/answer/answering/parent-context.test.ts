import { afterEach, describe, expect, it } from "vitest";
import type { Chunk, ChunkParent, SearchHit } from "../../../lib/domain.ts";
import { startOpenAiStub, type OpenAiStub, type StubChatMessage } from "../../../lib/testing/openai-stub.ts";
import { HashingEmbedder } from "../../../lib/testing/hashing-embedder.ts";
import { answer, type AnswerDeps, type AnswerEvent, type AnswerSettings } from "./answer-pipeline.ts";
import { CitationMapper } from "./citation-mapper.ts";
import { buildContext, renderContext } from "./context-builder.ts";
import type { ChunkPosition } from "../retrieval/neighbour-expansion.ts";
import { OpenAiChatModel } from "../chat-models/openai-chat-model.ts";
import { loadParents } from "./parent-context.ts";
import { retrieveWithOptions } from "../retrieval/retrieval-options.ts";
import { makeHit } from "../testing/test-hits.ts";

// Whitespace-separated words stand in for the model's tokens.
const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length;

// One document, two sections; each section is a parent, cut into children that overlap a little
// (the chunker repeats the end of one child at the start of the next).
const DOC =
  "# Pump manual\n\n## Installation\n\nMount the pump on a level concrete base. Bolt it down with four M8 bolts. " +
  "Connect the inlet hose before the outlet hose.\n\n## Maintenance\n\nReplace the shaft seal every 2,000 hours. Drain the housing before the first frost.";

function span(text: string, from = 0): [number, number] {
  const start = DOC.indexOf(text, from);
  if (start < 0) throw new Error(`not in the document: ${text}`);
  return [start, start + text.length];
}

function parentOf(index: number, first: string, last: string, firstChunkIndex: number, chunkCount: number, sectionPath: string[]): ChunkParent {
  const [start] = span(first);
  const [, end] = span(last);
  return { index, start, end, tokenCount: countWords(DOC.slice(start, end)), sectionPath, firstChunkIndex, chunkCount };
}

const installation = parentOf(0, "## Installation", "outlet hose.", 0, 3, ["Pump manual", "Installation"]);
const maintenance = parentOf(1, "## Maintenance", "first frost.", 3, 2, ["Pump manual", "Maintenance"]);
const CHILD_TEXTS: [string, ChunkParent][] = [
  ["## Installation\n\nMount the pump on a level concrete base.", installation],
  // Overlaps the first child by its last sentence.
  ["level concrete base. Bolt it down with four M8 bolts.", installation],
  ["Connect the inlet hose before the outlet hose.", installation],
  ["## Maintenance\n\nReplace the shaft seal every 2,000 hours.", maintenance],
  ["Drain the housing before the first frost.", maintenance],
];
const children: Chunk[] = CHILD_TEXTS.map(([text, parent], index) => {
  const [start, end] = span(text);
  return {
    id: `child-${index}`,
    documentId: "doc-pump",
    knowledgeBaseId: "kb-1",
    index,
    text,
    tokenCount: countWords(text),
    page: 0,
    pageEnd: 0,
    sectionPath: [...parent.sectionPath],
    start,
    end,
    parent,
  };
});

const flat = (text: string) => text.replace(/\s+/g, " ");

function childHit(index: number, score: number): SearchHit {
  return { chunk: children[index], fileName: "pump.md", score, explain: { bm25Rank: 1, bm25Score: score, vectorRank: 0, vectorScore: 0, fusedScore: score } };
}

/** The index's chunk look-up over the stored children, recording what was asked. */
function store(stored: Chunk[] = children) {
  const asked: ChunkPosition[][] = [];
  const chunksAt = async (positions: ChunkPosition[]) => {
    asked.push(positions);
    return positions.flatMap((p) => stored.filter((c) => c.knowledgeBaseId === p.knowledgeBaseId && c.documentId === p.documentId && c.index === p.index));
  };
  return { chunksAt, asked };
}

describe("reading parents", () => {
  it("reads each parent once from its children, cutting their overlap, so its text is the document's span", async () => {
    const { chunksAt, asked } = store();
    const parents = await loadParents([childHit(2, 0.9), childHit(0, 0.8), childHit(4, 0.7)], chunksAt);
    expect(asked).toHaveLength(1);
    expect(asked[0].map((p) => p.index)).toEqual([0, 1, 2, 3, 4]);
    // The space the chunker left between two children reads as a line break (joinSpans).
    expect([...parents.values()].map((p) => p.text)).toEqual([
      "## Installation\n\nMount the pump on a level concrete base. Bolt it down with four M8 bolts.\nConnect the inlet hose before the outlet hose.",
      "## Maintenance\n\nReplace the shaft seal every 2,000 hours.\nDrain the housing before the first frost.",
    ]);
    expect([...parents.values()].map((p) => flat(p.text))).toEqual([flat(DOC.slice(installation.start, installation.end)), flat(DOC.slice(maintenance.start, maintenance.end))]);
  });

  it("leaves out a parent with a missing child and a child whose parent names no children", async () => {
    const { chunksAt } = store(children.filter((c) => c.index !== 1));
    const legacy = { ...childHit(3, 0.5), chunk: { ...children[3], parent: { ...maintenance, chunkCount: 0 } } };
    expect((await loadParents([childHit(2, 0.9), legacy], chunksAt)).size).toBe(0);
  });
});

describe("a context of parents", () => {
  it("puts a parent in once, at the rank of its best child, folding its other matched children into it", async () => {
    const { chunksAt } = store();
    const other = makeHit("other", "Pumps hum when the bearings wear out.", { fileName: "faq.md" });
    const hits = [childHit(2, 0.9), other, childHit(0, 0.6), childHit(1, 0.5)];
    const parents = await loadParents(hits, chunksAt);
    const built = buildContext(hits, { tokenBudget: 1000, countTokens: countWords, parents });

    expect(built.chunks.map((c) => [c.number, c.hit.chunk.id])).toEqual([[1, "child-2"], [2, "other"]]);
    const entry = built.chunks[0];
    expect(entry.hit.chunk).toMatchObject({ start: installation.start, end: installation.end, sectionPath: ["Pump manual", "Installation"] });
    expect(flat(entry.hit.chunk.text)).toBe(flat(DOC.slice(installation.start, installation.end)));
    expect(entry.parent!.matched.map((h) => h.chunk.id)).toEqual(["child-2", "child-0", "child-1"]);
    expect(built.excluded).toEqual([]);
    // No duplicated text: the overlapping sentence appears once in the whole prompt block.
    const rendered = renderContext(built.chunks);
    expect(rendered.split("level concrete base.").length - 1).toBe(1);
    expect(rendered.startsWith("[1] (pump.md, Pump manual > Installation)\n## Installation")).toBe(true);
    expect(built.tokens).toBe(countWords(rendered));
  });

  it("falls back to the matched child on its own when the parent does not fit what is left", async () => {
    const { chunksAt } = store();
    const hits = [childHit(4, 0.9), childHit(2, 0.8), childHit(0, 0.7)];
    const parents = await loadParents(hits, chunksAt);
    const entry = (n: number, section: string, text: string) => countWords(`[${n}] (pump.md, Pump manual > ${section})\n${text}`);
    const textOf = (p: ChunkParent) => [...parents.values()].find((b) => b.parent.index === p.index)!.text;
    const maintenanceText = textOf(maintenance);
    const installationText = textOf(installation);
    // Room for the Maintenance parent and one short child, not for the Installation parent.
    const budget = entry(1, "Maintenance", maintenanceText) + entry(2, "Installation", children[2].text);
    expect(budget).toBeLessThan(entry(1, "Maintenance", maintenanceText) + entry(2, "Installation", installationText));
    const built = buildContext(hits, { tokenBudget: budget, countTokens: countWords, parents });

    expect(built.chunks.map((c) => [c.hit.chunk.id, c.hit.chunk.text, c.parent !== undefined])).toEqual([
      ["child-4", maintenanceText, true],
      ["child-2", children[2].text, false],
    ]);
    expect(built.excluded.map((e) => [e.hit.chunk.id, e.reason])).toEqual([["child-0", "over-budget"]]);
    expect(built.tokens).toBeLessThanOrEqual(budget);
  });

  it("cites the child whose text the cited sentence comes from, naming the parent; the best match without a sentence", async () => {
    const { chunksAt } = store();
    const hits = [childHit(2, 0.9), childHit(1, 0.4)];
    const built = buildContext(hits, { tokenBudget: 1000, countTokens: countWords, parents: await loadParents(hits, chunksAt) });

    const fromSibling = new CitationMapper(built.chunks).push("Mount the pump first. [1]");
    const citation = fromSibling.find((e) => e.type === "citation")!;
    expect(citation.type === "citation" && citation.citation).toMatchObject({
      marker: 1,
      chunkId: "child-0",
      start: children[0].start,
      end: children[0].end,
      sectionPath: ["Pump manual", "Installation"],
      score: 0.9,
      parent: installation,
    });
    const bare = new CitationMapper(built.chunks).push("[1]").find((e) => e.type === "citation")!;
    expect(bare.type === "citation" && [bare.citation.chunkId, bare.citation.start, bare.citation.end]).toEqual(["child-2", children[2].start, children[2].end]);
  });
});

describe("answers over parents", () => {
  let stub: OpenAiStub | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });
  const settings: AnswerSettings = { retrieval: { knowledgeBaseIds: ["kb-1"], mode: "hybrid", topK: 5, minScore: 0, documentIds: [] }, contextTokenBudget: 1000 };

  function deps(hits: SearchHit[], overrides: Partial<AnswerDeps> = {}): AnswerDeps {
    const embedder = new HashingEmbedder();
    return {
      embed: async (q) => ({ vector: (await embedder.embed([q], "query"))[0], knownTokenShare: embedder.knownTokenShare(q) }),
      search: async () => hits,
      countTokens: countWords,
      chunksAt: store().chunksAt,
      ...overrides,
    };
  }

  async function collect(events: AsyncIterable<AnswerEvent>) {
    const all: AnswerEvent[] = [];
    for await (const e of events) all.push(e);
    const final = all.at(-1);
    if (final?.type !== "final") throw new Error("the last event is not final");
    return { text: all.map((e) => (e.type === "text" ? e.delta : "")).join(""), citations: all.flatMap((e) => (e.type === "citation" ? [e.citation] : [])), final };
  }

  it("extractive: quotes a sentence only the parent holds and cites the child it is in", async () => {
    // Search matched the hose sentence; the bolts the question asks about are in a sibling.
    const { text, citations, final } = await collect(answer("How many M8 bolts hold the pump down?", deps([childHit(2, 0.9), childHit(3, 0.3)]), settings));
    expect(text).toContain("Bolt it down with four M8 bolts. [1]");
    // Each sentence's citation is the child it is in: the bolts one a sibling search did not match.
    const bolts = citations.find((c) => DOC.slice(c.start, c.end).includes("four M8 bolts"));
    expect(bolts).toMatchObject({ marker: 1, chunkId: "child-1", start: children[1].start, end: children[1].end, parent: installation });
    for (const c of citations) expect(c.parent).toEqual(installation);
    expect(new Set(citations.map((c) => c.chunkId)).size).toBe(citations.length);

    const { record } = final;
    expect(record.context.map((c) => [c.number, c.chunkId, c.parent?.index, c.matchedChunkIds])).toEqual([
      [1, "child-2", 0, ["child-2"]],
      [2, "child-3", 1, ["child-3"]],
    ]);
    expect(record.hits.map((h) => h.contextNumber)).toEqual([1, 2]);
    expect(record.stages.find((s) => s.stage === "parents")?.note).toBe("2 parents read (5 chunks)");
    expect(record.stages.find((s) => s.stage === "build-context")?.note).toMatch(/2 parents holding 2 matched chunks/);
  });

  it("with a chat model: the prompt holds the parent once, and the citation points at the child the sentence comes from", async () => {
    let prompt = "";
    const reply = (messages: StubChatMessage[]) => {
      prompt = messages.find((m) => m.role === "user")!.content;
      return "Drain the housing before the first frost [1].";
    };
    stub = await startOpenAiStub({ reply });
    const chatModel = new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "gpt-test", maxRetries: 0 });
    const { citations, final } = await collect(answer("How often is the seal replaced?", deps([childHit(3, 0.9), childHit(4, 0.5)], { chatModel }), settings));

    expect(prompt).toContain("[1] (pump.md, Pump manual > Maintenance)\n## Maintenance\n\nReplace the shaft seal every 2,000 hours.\nDrain the housing before the first frost.");
    expect(prompt.split("Replace the shaft seal").length - 1).toBe(1);
    expect(prompt).not.toContain("[2]");
    expect(citations.map((c) => [c.marker, c.chunkId, c.start, c.end, c.parent?.index])).toEqual([[1, "child-4", children[4].start, children[4].end, 1]]);
    expect(final.record.hits.map((h) => [h.chunkId, h.contextNumber])).toEqual([["child-3", 1], ["child-4", 1]]);
  });

  it("reads the matched chunks alone, and says so, when the parents cannot be read", async () => {
    const failing = deps([childHit(2, 0.9)], { chunksAt: async () => Promise.reject(Object.assign(new Error("down"), { name: "UnavailableError" })) });
    const { citations, final } = await collect(answer("Which hose is connected first?", failing, settings));
    expect(citations.map((c) => [c.chunkId, c.parent])).toEqual([["child-2", undefined]]);
    expect(final.record.stages.find((s) => s.stage === "parents")?.note).toBe("failed: UnavailableError; matched chunks read alone");
  });

  it("leaves hits with a parent to their parent when neighbours are asked for, expanding only the others", async () => {
    const plain = { ...makeHit("plain-1", "Second plain chunk."), chunk: { ...makeHit("plain-1", "Second plain chunk.").chunk, documentId: "doc-plain", index: 1 } };
    const neighbour = { ...plain.chunk, id: "plain-0", index: 0, text: "First plain chunk.", start: 0, end: 18 };
    const { chunksAt } = store([...children, neighbour]);
    const d = deps([childHit(2, 0.9), plain], { chunksAt });
    const { hits, notes } = await retrieveWithOptions("hose", d, settings.retrieval, { neighbourChunks: 1 }, 1000);
    expect(hits[0].chunk).toEqual(children[2]);
    expect(hits[1].explain.mergedChunkIds).toEqual(["plain-0"]);
    expect(notes.mergedNeighbours).toBe(1);
  });
});
