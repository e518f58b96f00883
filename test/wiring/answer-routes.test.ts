// The answer service's RPC wiring against a real embedder service (the hashing embedder behind its
// own routes) and an index whose knowledge-base lookup can be slowed down, all over in-memory
// Connect transports with the production error mapping. It wires two services, so it lives in test/.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type ConnectRouter } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { AnswerService } from "../../gen/quarry/answer/v1/answer_pb.ts";
import { KnowledgeBaseSchema, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { EmbedderService } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { NotFoundError } from "../../lib/errors.ts";
import { createLogger } from "../../lib/logger.ts";
import { rpcEdgeInterceptor } from "../../lib/rpc/interceptors.ts";
import { inProcessTransport } from "../../lib/rpc/transports.ts";
import { type EmbeddingKind, SingleModelPool, embedderRoutes } from "../../services/embedder/index.ts";
import { answerRoutes, answerApplication } from "../../services/answer/index.ts";
import { HashingEmbedder } from "../../lib/testing/hashing-embedder.ts";

const logger = createLogger("test", "silent");
const edge = [rpcEdgeInterceptor(logger)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves when `done()` holds, or after `limitMs` regardless (so a sequential caller is seen as one). */
async function until(done: () => boolean, limitMs: number): Promise<void> {
  for (const start = Date.now(); !done() && Date.now() - start < limitMs; ) await sleep(5);
}

function setup(options: { lookupWaitsForEmbedding?: boolean; dimension?: number } = {}) {
  const timeline: string[] = [];
  const embedded: string[] = [];
  const searched: { mode: RetrievalMode; vectorLength: number }[] = [];
  class Timed extends HashingEmbedder {
    override async embed(texts: string[], kind: EmbeddingKind) {
      timeline.push("embed started");
      embedded.push(...texts);
      return super.embed(texts, kind);
    }
  }
  const embedder = inProcessTransport(embedderRoutes(new SingleModelPool(new Timed({ dimension: 16 }))), edge);
  const index = inProcessTransport(
    (router: ConnectRouter) =>
      router.service(IndexService, {
        // The retriever looks the named bases up in one ListKnowledgeBases call.
        async listKnowledgeBases(request) {
          // The look-up holds until the embedding has started (2 s at most): a retriever that embeds
          // while it looks up passes on any machine; one that waits for the look-up first fails.
          if (options.lookupWaitsForEmbedding) await until(() => timeline.includes("embed started"), 2_000);
          timeline.push("lookup done");
          const missing = request.knowledgeBases.find((name) => name !== "docs");
          if (missing !== undefined) throw new NotFoundError(`knowledge base "${missing}" does not exist`);
          const docs = create(KnowledgeBaseSchema, { id: "kb_1", name: "docs", embeddingModel: "test-hashing", embeddingDimension: options.dimension ?? 16 });
          return { knowledgeBases: request.knowledgeBases.map(() => docs) };
        },
        async search(request) {
          searched.push({ mode: request.mode, vectorLength: request.vector.length });
          return { hits: [] };
        },
      }),
    edge,
  );
  const answer = inProcessTransport(
    answerRoutes(
      answerApplication({
        index: createClient(IndexService, index),
        embedder: createClient(EmbedderService, embedder),
        countTokens: (text) => text.length,
        contextTokenBudget: 1000,
        maxQuestionChars: 100,
      }),
    ),
    edge,
  );
  return { client: createClient(AnswerService, answer), timeline, embedded, searched };
}

describe("answer routes", () => {
  it("embeds a hybrid question while the knowledge base is being looked up, once", async () => {
    const t = setup({ lookupWaitsForEmbedding: true });
    await t.client.retrieve({ query: "  reset my password ", knowledgeBaseIds: ["docs"], settings: { mode: RetrievalMode.HYBRID } });
    expect(t.timeline).toEqual(["embed started", "lookup done"]);
    expect(t.embedded).toEqual(["reset my password"]);
    expect(t.searched).toEqual([{ mode: RetrievalMode.HYBRID, vectorLength: 16 }]);
  });

  it("does not embed a keyword search, nor a question retrieval will refuse", async () => {
    const t = setup();
    await t.client.retrieve({ query: "reset", knowledgeBaseIds: ["docs"], settings: { mode: RetrievalMode.BM25 } });
    const long = await t.client.retrieve({ query: "x".repeat(101), knowledgeBaseIds: ["docs"] }).catch((e: unknown) => ConnectError.from(e));
    expect(long).toBeInstanceOf(ConnectError);
    expect((long as ConnectError).code).toBe(Code.InvalidArgument);
    expect(t.embedded).toEqual([]);
  });

  it("reports a knowledge base that does not exist as not found, even with an embedding under way", async () => {
    const t = setup();
    const error = await t.client.retrieve({ query: "reset", knowledgeBaseIds: ["nope"], settings: { mode: RetrievalMode.HYBRID } }).catch((e: unknown) => ConnectError.from(e));
    expect((error as ConnectError).code).toBe(Code.NotFound);
    expect((error as ConnectError).rawMessage).toContain("nope");
    expect(t.searched).toEqual([]);
  });

  it("refuses to search a knowledge base built for another vector size, naming both models", async () => {
    const t = setup({ dimension: 384 });
    const error = await t.client.retrieve({ query: "reset", knowledgeBaseIds: ["docs"], settings: { mode: RetrievalMode.VECTOR } }).catch((e: unknown) => ConnectError.from(e));
    expect((error as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((error as ConnectError).rawMessage).toMatch(/384-dim.*16 from test-hashing/);
    expect(t.searched).toEqual([]);
  });
});
