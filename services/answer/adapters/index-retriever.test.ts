// The retrieval's peer calls carry the caller's signal: over the in-process transport of embedded
// Quarry (as over gRPC), a caller going away fires the index handler's own signal, which is what
// lets the index drop a search still waiting for a read thread; and a caller already gone costs no
// peer call at all. A base that switches its model between look-up and search is searched again.
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { EmbedderService } from "../../../gen/quarry/embedder/v1/embedder_pb.ts";
import { IndexService } from "../../../gen/quarry/index/v1/index_pb.ts";
import { CancelledError, ErrorReasons, FailedPreconditionError } from "../../../lib/errors.ts";
import { toConnectError } from "../../../lib/rpc/error-mapping.ts";
import { knowledgeBaseToProto } from "../../../lib/proto-convert.ts";
import type { KnowledgeBase } from "../../../lib/domain.ts";
import { IndexRetriever } from "./index-retriever.ts";

const kb: KnowledgeBase = {
  id: "kb-1",
  name: "manuals",
  description: "",
  embeddingModel: "test-model",
  embeddingDimension: 2,
  chunking: { strategy: "recursive", chunkSize: 200, chunkOverlap: 0, separators: [] },
  documentCount: 1,
  chunkCount: 1,
  tokenCount: 10,
  createdAt: new Date(),
  updatedAt: new Date(),
};

function peers() {
  const calls: string[] = [];
  let searchSignal: AbortSignal | undefined;
  let searchArrived = () => {};
  const arrived = new Promise<void>((resolve) => (searchArrived = resolve));
  const index = createClient(
    IndexService,
    createRouterTransport(({ service }) =>
      service(IndexService, {
        listKnowledgeBases: () => {
          calls.push("listKnowledgeBases");
          return { knowledgeBases: [knowledgeBaseToProto(kb)] };
        },
        // A search that waits until its caller goes away, as one queued behind busy read threads.
        search: async (_request, context) => {
          calls.push("search");
          searchSignal = context.signal;
          searchArrived();
          await new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
          return { hits: [] };
        },
      }),
    ),
  );
  const embedder = createClient(
    EmbedderService,
    createRouterTransport(({ service }) =>
      service(EmbedderService, {
        embed: () => {
          calls.push("embed");
          return { model: "test-model", vectors: [{ values: [1, 0], knownTokenShare: 1 }] };
        },
      }),
    ),
  );
  return { retriever: new IndexRetriever({ index, embedder }), calls, arrived, searchSignal: () => searchSignal };
}

describe("IndexRetriever and a caller that goes away", () => {
  it("fires the index handler's signal when the caller aborts, and the caller sees a CancelledError", async () => {
    const { retriever, arrived, searchSignal } = peers();
    const caller = new AbortController();
    const { deps } = await retriever.open("how is the pump primed", "bm25", ["manuals"], caller.signal);
    const search = deps.search({ knowledgeBaseIds: [kb.id], text: "pump", mode: "bm25", topK: 5, minScore: 0, documentIds: [] });
    await arrived;
    expect(searchSignal()?.aborted).toBe(false);
    caller.abort();
    await expect(search).rejects.toBeInstanceOf(CancelledError);
    expect(searchSignal()?.aborted).toBe(true);
  });

  it("makes no peer call for a caller already gone", async () => {
    const { retriever, calls } = peers();
    const error = await retriever.open("how is the pump primed", "hybrid", ["manuals"], AbortSignal.abort()).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(CancelledError);
    expect(calls).toEqual([]);
  });
});

// A base whose embedding model switches (the end of ChangeEmbeddingModel) between a retrieval's
// look-up and its search: the index refuses the old model's vector, and the retriever embeds the
// same text with the base's new model and searches again, so neither Search nor a chat turn fails.
describe("IndexRetriever and a base that switched its model mid-retrieval", () => {
  function switching(options: { reason?: boolean } = {}) {
    let current: KnowledgeBase = { ...kb, embeddingModel: "old-model", embeddingDimension: 2 };
    const embedded: string[] = [];
    const searched: number[] = [];
    const index = createClient(
      IndexService,
      createRouterTransport(({ service }) =>
        service(IndexService, {
          listKnowledgeBases: () => ({ knowledgeBases: [knowledgeBaseToProto(current)] }),
          search: (request) => {
            searched.push(request.vector.length);
            if (request.vector.length !== current.embeddingDimension) {
              const message = `query vector has ${request.vector.length} dimensions; knowledge base ${current.id} stores ${current.embeddingDimension}`;
              throw toConnectError(new FailedPreconditionError(message, options.reason === false ? {} : { reason: ErrorReasons.staleQueryVector }));
            }
            return { hits: [] };
          },
        }),
      ),
    );
    const embedder = createClient(
      EmbedderService,
      createRouterTransport(({ service }) =>
        service(EmbedderService, {
          embed: (request) => {
            embedded.push(`${request.model}: ${request.texts[0]}`);
            const dimension = request.model === "new-model" ? 3 : 2;
            return { model: request.model, vectors: [{ values: new Array(dimension).fill(0.5), knownTokenShare: 1 }] };
          },
        }),
      ),
    );
    const switchModel = () => (current = { ...current, embeddingModel: "new-model", embeddingDimension: 3 });
    return { retriever: new IndexRetriever({ index, embedder }), switchModel, embedded, searched };
  }

  it("embeds the text again with the new model and searches with that vector", async () => {
    const { retriever, switchModel, embedded, searched } = switching();
    const { deps } = await retriever.open("how is the pump primed", "hybrid", ["manuals"]);
    const { vector } = await deps.embed("a hypothetical passage about priming", "old-model");
    switchModel();
    await deps.search({ knowledgeBaseIds: [kb.id], text: "how is the pump primed", vector, mode: "hybrid", topK: 5, minScore: 0, documentIds: [] });
    expect(searched).toEqual([2, 3]);
    // The text that made the refused vector (here a HyDE passage), not the query's text, is embedded again.
    expect(embedded.at(-1)).toBe("new-model: a hypothetical passage about priming");
  });

  it("lets any other refusal through, and a vector it did not hand out", async () => {
    const plain = switching({ reason: false });
    const opened = await plain.retriever.open("how is the pump primed", "hybrid", ["manuals"]);
    const { vector } = await opened.deps.embed("how is the pump primed", "old-model");
    plain.switchModel();
    const query = { knowledgeBaseIds: [kb.id], text: "pump", vector, mode: "hybrid" as const, topK: 5, minScore: 0, documentIds: [] };
    await expect(opened.deps.search(query)).rejects.toBeInstanceOf(FailedPreconditionError);
    expect(plain.searched).toEqual([2]);

    const stranger = switching();
    const { deps } = await stranger.retriever.open("how is the pump primed", "hybrid", ["manuals"]);
    stranger.switchModel();
    await expect(deps.search({ ...query, vector: new Float32Array(2) })).rejects.toBeInstanceOf(FailedPreconditionError);
    expect(stranger.searched).toEqual([2]);
  });
});
