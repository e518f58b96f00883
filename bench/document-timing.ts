// Uploads one document and follows it on WatchIngestion: when it started vectorizing and when it
// was ready. The fairness test and `quarry bench fairness` time a small document behind a large one
// with it.
import type { QuarryClient } from "../client/gateway-client.ts";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import type { WatchIngestionResponse } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import { seededRandom } from "./synthetic-corpus.ts";

export interface ReadyDocument {
  documentId: string;
  /** Upload sent → READY seen, ms. */
  ms: number;
  /** performance.now() when READY was seen, to order documents against each other. */
  readyAt: number;
  chunks: number;
}

export interface TrackedDocument {
  /** Resolves when the document reports its first vectorizing progress. */
  vectorizing: Promise<void>;
  ready: Promise<ReadyDocument>;
  /** The latest update with a message ("vectorizing n/N chunks" while it vectorizes). */
  latest(): WatchIngestionResponse | undefined;
}

/** `stop` ends the watch early (the caller has seen what it needed); `ready` then rejects. */
export function uploadAndTrack(client: QuarryClient, knowledgeBase: string, fileName: string, content: string | Uint8Array, timeoutMs = 1_800_000, stop?: AbortSignal): TrackedDocument {
  let markVectorizing!: () => void;
  const vectorizing = new Promise<void>((resolve) => (markVectorizing = resolve));
  let latest: WatchIngestionResponse | undefined;
  const ready = (async (): Promise<ReadyDocument> => {
    const started = performance.now();
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    const { document } = await client.uploadDocument({ header: { knowledgeBase, fileName }, content: bytes });
    const documentId = document!.id;
    for await (const update of client.watchIngestion({ documentIds: [documentId] }, { signal: stop ? AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs) })) {
      if (update.message) latest = update;
      if (update.status === DocumentStatus.EMBEDDING || update.status === DocumentStatus.INDEXING) markVectorizing();
      if (update.status === DocumentStatus.FAILED) throw new Error(`${fileName} failed: ${update.error}`);
      if (update.status === DocumentStatus.READY) {
        markVectorizing();
        const readyAt = performance.now();
        return { documentId, ms: Math.round(readyAt - started), readyAt, chunks: update.chunkCount };
      }
    }
    throw new Error(`the watch of ${fileName} ended before it was ready`);
  })();
  // A failure surfaces through `ready`; `vectorizing` must not be left hanging by it.
  ready.catch(() => markVectorizing());
  return { vectorizing, ready, latest: () => latest };
}

const WORDS =
  "the of and to in is that for it as with was on be by at this from are or an which have not one all were has had their more its when there can been other into some these than only two time may first new years most after would made"
    .split(" ");

/** Plain text of seeded pseudo-words: about `chunks` chunks at 48 tokens each, in short paragraphs. */
export function largeTextDocument(chunks: number, seed = 7): string {
  const random = seededRandom(seed);
  const paragraphs: string[] = [];
  for (let p = 0; p < chunks; p++) {
    const words: string[] = [];
    for (let w = 0; w < 40; w++) words.push(WORDS[Math.floor(random() * WORDS.length)]);
    words.push(`item${p}`);
    paragraphs.push(`${words.join(" ")}.`);
  }
  return paragraphs.join("\n\n");
}
