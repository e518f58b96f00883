// The retrieval's peer calls carry the caller's signal: over the in-process transport of embedded
// Quarry (as over gRPC), a caller going away fires the index handler's own signal, which is what
// lets the index drop a search still waiting for a read thread; and a caller already gone costs no
// peer call at all.
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { EmbedderService } from "../../../gen/quarry/embedder/v1/embedder_pb.ts";
import { IndexService } from "../../../gen/quarry/index/v1/index_pb.ts";
import { CancelledError } from "../../../lib/errors.ts";
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
