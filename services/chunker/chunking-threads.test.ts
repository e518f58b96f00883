// Chunking on worker threads: the result is what chunkDocument gives, errors keep their type, the
// limits fail a document with their variable's name, and the calling thread keeps turning meanwhile.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { PreviewChunksResponseSchema } from "../../gen/quarry/chunker/v1/chunker_pb.ts";
import { ChunksCreatedSchema, DocumentParsedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import type { ChunkingSettings, ParsedDocument } from "../../lib/domain.ts";
import { InvalidInputError, TooLargeError } from "../../lib/errors.ts";
import { parsedToProto } from "../../lib/proto-convert.ts";
import { WordPieceTokenCounter } from "../../lib/tokens/wordpiece-token-counter.ts";
import { chunkDocument } from "./chunk-document.ts";
import { ChunkingThreads } from "./chunking-threads.ts";
import { chunkerConfig } from "./config.ts";

const tokens = { tokenizerDir: chunkerConfig(process.env).tokenizerDir, maxInputTokens: 256 };
const settings: ChunkingSettings = { strategy: "recursive", chunkSize: 40, chunkOverlap: 5, separators: [] };
const doc = (text: string): ParsedDocument => ({ text, mimeType: "text/plain", parser: "builtin:text", pages: [], sections: [] }) as unknown as ParsedDocument;
const documentParsed = (text: string) =>
  toBinary(DocumentParsedSchema, create(DocumentParsedSchema, { documentId: "doc_1", knowledgeBaseId: "kb_1", version: 3n, fileName: "a.txt", parsed: parsedToProto(doc(text)) }));
const event = (text: string, extra: { maxChunks?: number } = {}) =>
  ({ kind: "event", documentParsed: documentParsed(text), settings, tokens, documentId: "doc_1", knowledgeBaseId: "kb_1", version: 3n, fileName: "a.txt", ...extra }) as const;
const threads = new ChunkingThreads({ threads: 1, memoryMb: 512, timeoutMs: 60_000 });
afterAll(() => threads.close());

describe("ChunkingThreads", () => {
  it("encodes the chunks chunkDocument makes, as a chunks.created payload", async () => {
    const text = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} covers leave, expenses and the cafeteria.`).join("\n\n");
    const created = fromBinary(ChunksCreatedSchema, await threads.run(event(text), "a.txt"));
    const expected = chunkDocument(doc(text), settings, WordPieceTokenCounter.fromModelDir(tokens.tokenizerDir), tokens);
    expect(created).toMatchObject({ documentId: "doc_1", knowledgeBaseId: "kb_1", version: 3n, fileName: "a.txt" });
    expect(created.chunks.map((c) => c.text)).toEqual(expected.map((d) => d.text));
  });

  it("previews the first chunks with the totals of all", async () => {
    const text = "word ".repeat(2_000);
    const preview = fromBinary(PreviewChunksResponseSchema, await threads.run({ kind: "preview", parsed: doc(text), settings, tokens, shown: 3 }, "p.txt"));
    expect(preview.chunks).toHaveLength(3);
    expect(preview.totalChunks).toBeGreaterThan(40);
  });

  it("keeps the error's type: no text, and the chunk limit naming its variable", async () => {
    await expect(threads.run(event("   "), "a.txt")).rejects.toThrow(InvalidInputError);
    await expect(threads.run(event("word ".repeat(2_000), { maxChunks: 3 }), "a.txt")).rejects.toThrow(
      expect.objectContaining({ name: "TooLargeError", message: expect.stringContaining("QUARRY_MAX_DOCUMENT_CHUNKS") }),
    );
  });

  it("fails a document over the time limit with TooLargeError naming QUARRY_CHUNK_TIMEOUT_MS", async () => {
    const hurried = new ChunkingThreads({ threads: 1, memoryMb: 512, timeoutMs: 1 });
    try {
      const failure = hurried.run(event("word ".repeat(200_000)), "slow.txt");
      await expect(failure).rejects.toThrow(TooLargeError);
      await expect(failure).rejects.toThrow(/slow\.txt took longer than 1 ms \(QUARRY_CHUNK_TIMEOUT_MS\)/);
    } finally {
      await hurried.close();
    }
  });

  it("leaves the calling thread free: its event loop keeps turning while a large document is split", async () => {
    let turns = 0;
    const ticker = setInterval(() => turns++, 5);
    try {
      await threads.run(event("lorem ipsum dolor ".repeat(30_000)), "big.txt");
    } finally {
      clearInterval(ticker);
    }
    // Split on this thread, the same document lets the interval fire once, after it finished.
    expect(turns).toBeGreaterThan(10);
  });
});
