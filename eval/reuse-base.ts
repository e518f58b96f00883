// Reusing an ingested knowledge base across evaluation runs: ingesting a corpus of thousands of
// documents takes most of a run, and experiments on search settings do not change the index.
import { Code, ConnectError } from "@connectrpc/connect";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import type { QuarryClient } from "../client/gateway-client.ts";
import type { IngestResult } from "./run-eval.ts";

/**
 * The base as an ingest result when it exists and holds documents; undefined when it must be
 * ingested. Hits map to BEIR ids through their file names (`${id}.md`), so no id map is needed.
 */
export async function ingestedBase(client: QuarryClient, knowledgeBase: string): Promise<IngestResult | undefined> {
  try {
    const base = (await client.getKnowledgeBase({ knowledgeBase })).knowledgeBase;
    if (!base || base.documentCount === 0n) return undefined;
    // A kept base may have documents still in flight (a run stopped mid-ingest): wait for them, as
    // a fresh ingest does, so every run scores the same index.
    const failed: IngestResult["failed"] = [];
    let chunks = 0;
    const finished = new Set<string>();
    for await (const update of client.watchIngestion({ knowledgeBase })) {
      if (finished.has(update.documentId)) continue;
      if (update.status === DocumentStatus.READY) chunks += update.chunkCount;
      else if (update.status === DocumentStatus.FAILED) failed.push({ beirId: update.fileName.replace(/\.(md|txt)$/, ""), error: update.error });
      else continue;
      finished.add(update.documentId);
    }
    return { knowledgeBase, beirIdOf: new Map(), documents: finished.size, chunks, failed, seconds: 0 };
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
    throw error;
  }
}
