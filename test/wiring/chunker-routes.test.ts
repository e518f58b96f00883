// The chunker's RPC handlers through an in-memory router transport: the service as assembled, its
// input limit learned from a real embedder service (the hashing embedder behind its own routes),
// with the production error mapping. It wires two services, so it lives in test/.
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ChunkerService } from "../../gen/quarry/chunker/v1/chunker_pb.ts";
import { ParsedDocumentSchema } from "../../gen/quarry/common/v1/common_pb.ts";
import { silentLogger } from "../../lib/logger.ts";
import { rpcEdgeInterceptor } from "../../lib/rpc/interceptors.ts";
import { inProcessTransport } from "../../lib/rpc/transports.ts";
import type { SharedDeps } from "../../lib/service-runtime.ts";
import { SingleModelPool, embedderRoutes } from "../../services/embedder/index.ts";
import { assembleChunker } from "../../services/chunker/index.ts";
import { HashingEmbedder } from "../../lib/testing/hashing-embedder.ts";
import { codeOf } from "../../lib/rpc/testing/connect-code.ts";

const embedder = inProcessTransport(embedderRoutes(new SingleModelPool(new HashingEmbedder({ dimension: 16, maxInputTokens: 128 }))), [rpcEdgeInterceptor(silentLogger)]);
const chunker = assembleChunker(process.env, { transport: () => embedder }, { logger: silentLogger } as SharedDeps);
const client = createClient(ChunkerService, inProcessTransport(chunker.server.routes, chunker.server.interceptors));
beforeAll(() => chunker.prepare!((_what, attempt) => attempt()));

const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i + 1} says something about leave, expenses and the cafeteria hours.`);
const document = create(ParsedDocumentSchema, { text: paragraphs.join("\n\n"), mimeType: "text/plain", parser: "builtin:text" });

describe("chunker routes", () => {
  it("resolves unset settings to defaults within the embedder's limit", async () => {
    const res = await client.resolveChunkingSettings({ settings: { chunkOverlap: 5 } });
    expect(res.maxChunkTokens).toBeGreaterThan(0);
    expect(res.maxChunkTokens).toBeLessThanOrEqual(128);
    expect(res.settings!.chunkOverlap).toBe(5);
    expect(res.settings!.chunkSize).toBeGreaterThan(5);
    expect(res.settings!.chunkSize).toBeLessThanOrEqual(res.maxChunkTokens);
  });

  it("chunks a document with stable ids, covering its text in order", async () => {
    const request = { document, documentId: "doc_1", knowledgeBaseId: "kb_1", settings: { chunkSize: 40, chunkOverlap: 0 } };
    const { chunks } = await client.chunkDocument(request);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
    expect(chunks.every((c) => c.documentId === "doc_1" && c.knowledgeBaseId === "kb_1" && c.tokenCount <= 40)).toBe(true);
    expect(chunks[0].text).toContain("Paragraph 1 ");
    expect(chunks.at(-1)!.text).toContain("Paragraph 12 ");
    expect((await client.chunkDocument(request)).chunks.map((c) => c.id)).toEqual(chunks.map((c) => c.id));
  });

  it("previews at most the chunks asked for, with the totals of all", async () => {
    const preview = await client.previewChunks({ document, settings: { chunkSize: 40, chunkOverlap: 0 }, maxChunks: 2 });
    expect(preview.chunks).toHaveLength(2);
    expect(preview.totalChunks).toBeGreaterThan(2);
    expect(preview.totalTokens).toBeGreaterThan(preview.chunks.reduce((sum, c) => sum + c.tokenCount, 0));
  });

  it("refuses a missing document, settings beyond the model's limit, and a model the embedder does not serve", async () => {
    expect(await codeOf(client.chunkDocument({ documentId: "doc_1" }))).toBe("InvalidArgument");
    expect(await codeOf(client.previewChunks({}))).toBe("InvalidArgument");
    expect(await codeOf(client.resolveChunkingSettings({ settings: { chunkSize: 10_000 } }))).toBe("InvalidArgument");
    expect(await codeOf(client.resolveChunkingSettings({ settings: { chunkSize: 50, chunkOverlap: 50 } }))).toBe("InvalidArgument");
    expect(await codeOf(client.resolveChunkingSettings({ embeddingModel: "other-model" }))).toBe("InvalidArgument");
  });
});
