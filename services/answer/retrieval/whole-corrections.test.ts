import { describe, expect, it } from "vitest";
import type { Chunk, SearchHit } from "../../../lib/domain.ts";
import { correctionDocumentText, parseCorrectionText } from "../../../lib/correction-document.ts";
import { matchCorrections } from "./correction-match.ts";
import type { ChunkPosition } from "./neighbour-expansion.ts";
import { readWholeCorrections } from "./whole-corrections.ts";

/** A document cut into chunks of `size` characters overlapping by `overlap`, as the chunker stores them. */
function chunked(documentId: string, text: string, size: number, overlap: number): Chunk[] {
  const chunks: Chunk[] = [];
  for (let start = 0; start < text.length; start += size - overlap) {
    const end = Math.min(text.length, start + size);
    chunks.push({ id: `${documentId}-${chunks.length}`, documentId, knowledgeBaseId: "kb-c", index: chunks.length, text: text.slice(start, end), tokenCount: 10, page: 0, pageEnd: 0, sectionPath: [], start, end });
    if (end === text.length) break;
  }
  return chunks;
}

const hitOf = (chunk: Chunk, score: number): SearchHit => ({ chunk, fileName: `${chunk.documentId}.txt`, score, explain: { bm25Rank: 1, bm25Score: score, vectorRank: 0, vectorScore: 0, fusedScore: score } });

function store(...documents: Chunk[][]) {
  const all = documents.flat();
  const asked: ChunkPosition[][] = [];
  const chunksAt = async (positions: ChunkPosition[]) => {
    asked.push(positions);
    return positions.flatMap((p) => all.filter((c) => c.documentId === p.documentId && c.index === p.index));
  };
  return { chunksAt, asked };
}

const WORDINGS = Array.from({ length: 12 }, (_, i) => `How often is lamp number ${i + 1} of the Skerry lighthouse serviced?`);
const ANSWER = `${"The harbour crew services every lamp on a fixed rota. ".repeat(12)}The last step is always the lens: it is cleaned every 14 days.`;
const LONG = correctionDocumentText(WORDINGS, ANSWER);

describe("readWholeCorrections", () => {
  it("reads a correction found by a later chunk whole, so the gate sees every wording and the answer is all there", async () => {
    const chunks = chunked("corr-long", LONG, 300, 40);
    expect(chunks.length).toBeGreaterThan(4);
    // A chunk past the first neither starts with the wordings nor holds the whole answer.
    const found = chunks[3];
    expect(parseCorrectionText(found.text)).toBeUndefined();
    const [whole] = await readWholeCorrections([hitOf(found, 0.8)], store(chunks).chunksAt);
    expect(whole.chunk.text).toBe(LONG);
    expect(whole.chunk).toMatchObject({ id: found.id, start: 0, end: LONG.length });
    expect(whole.score).toBe(0.8);
    expect(parseCorrectionText(whole.chunk.text)).toEqual({ questions: WORDINGS, answer: ANSWER });
    // The last wording, in the third chunk, decides now that the gate reads it.
    const match = (await matchCorrections(WORDINGS[11], [whole], undefined)).get(found.id)!;
    expect(match).toMatchObject({ question: WORDINGS[11], method: "same-question", relevant: true });
  });

  it("makes one candidate of several chunks of one correction, at its best chunk's place, and leaves short ones as they were", async () => {
    const long = chunked("corr-long", LONG, 300, 40);
    const short = chunked("corr-short", correctionDocumentText(["Who lights the lamp?"], "The keeper."), 300, 40);
    expect(short).toHaveLength(1);
    const hits = [hitOf(long[2], 0.9), hitOf(short[0], 0.7), hitOf(long[0], 0.6)];
    const whole = await readWholeCorrections(hits, store(long, short).chunksAt);
    expect(whole.map((h) => [h.chunk.id, h.score])).toEqual([
      [long[2].id, 0.9],
      [short[0].id, 0.7],
    ]);
    expect(whole[1].chunk.text).toBe(short[0].text);
  });

  it("reads on past the first read for a correction of many chunks, in growing steps", async () => {
    const text = correctionDocumentText(WORDINGS, ANSWER.repeat(6));
    const chunks = chunked("corr-huge", text, 120, 20);
    expect(chunks.length).toBeGreaterThan(40);
    const { chunksAt, asked } = store(chunks);
    const [whole] = await readWholeCorrections([hitOf(chunks[1], 0.5)], chunksAt);
    expect(whole.chunk.text).toBe(text);
    // Chunks 0..17 first, then 18..71: two look-ups, none asked twice.
    expect(asked.map((p) => [p[0].index, p.at(-1)!.index])).toEqual([
      [0, 17],
      [18, 71],
    ]);
  });

  it("keeps the chunk as found when its document has a hole (re-chunked meanwhile)", async () => {
    const chunks = chunked("corr-long", LONG, 300, 40);
    const found = hitOf(chunks[2], 0.5);
    const [kept] = await readWholeCorrections([found], store(chunks.filter((c) => c.index !== 1)).chunksAt);
    expect(kept).toBe(found);
  });
});
