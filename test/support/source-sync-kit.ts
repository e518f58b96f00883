// What the source suites share (folder and website in test/e2e, S3 in test/distributed): a sync that
// waits until every document of the base is ready or failed and answers the texts the OpenAI-compatible
// embedding stub was asked to embed meanwhile, and which documents hold a phrase by keyword search.
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import type { SourceSync } from "../../gen/quarry/common/v1/source_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import type { OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { watchAll } from "../e2e/e2e-helpers.ts";

const FINAL = new Set([DocumentStatus.READY, DocumentStatus.FAILED]);

/** Every text the embedding stub was asked to embed since request `from`. */
export function embeddedSince(stub: OpenAiStub, from: number): string[] {
  return stub.requests
    .slice(from)
    .filter((r) => r.path === "/v1/embeddings")
    .flatMap((r) => {
      const input = (r.body as { input: string | string[] }).input;
      return Array.isArray(input) ? input : [input];
    });
}

/** Waits until no document of the base is still ingesting. */
export async function settle(client: QuarryClient, kb: string): Promise<void> {
  const documents = (await client.listDocuments({ knowledgeBase: kb })).documents;
  const inFlight = documents.filter((d) => !FINAL.has(d.status)).map((d) => d.id);
  if (inFlight.length > 0) await watchAll(client, inFlight);
}

export interface SourceSyncKit {
  /** Syncs and waits until every document of the base is ready or failed; answers the sync and the texts embedded meanwhile. */
  sync(kb: string, source: string): Promise<{ sync: SourceSync; embedded: string[] }>;
  /** The documents (by name) whose chunks hold the phrase, by keyword search. */
  holding(kb: string, phrase: string, metadataEquals?: Record<string, string>): Promise<string[]>;
}

export function sourceSyncKit(client: () => QuarryClient, embeddings: () => OpenAiStub): SourceSyncKit {
  return {
    async sync(kb, source) {
      const from = embeddings().requests.length;
      const synced = (await client().syncSource({ knowledgeBase: kb, source })).source!;
      await settle(client(), kb);
      return { sync: synced.lastSync!, embedded: embeddedSince(embeddings(), from) };
    },
    async holding(kb, phrase, metadataEquals = {}) {
      const { hits } = await client().search({ query: phrase, knowledgeBases: [kb], settings: { mode: RetrievalMode.BM25, topK: 20, metadataEquals } });
      return [...new Set(hits.filter((h) => h.chunk!.text.includes(phrase)).map((h) => h.fileName))].sort();
    },
  };
}
