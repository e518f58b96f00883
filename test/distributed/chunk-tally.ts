// What the replica and fault tests ingest and how they prove nothing was lost or doubled: documents
// of 1 to 6 paragraphs (so they split into different numbers of chunks), and each READY document's
// chunks in OpenSearch counted against the split PreviewChunks gives the same text. A lost event
// shows as missing chunks, a replayed one as extra chunks.
import type { QuarryClient } from "../../client/gateway-client.ts";

const WORDS = ["canal", "lighthouse", "harbour", "ferry", "towpath", "weir", "sluice", "quay"];

/** `count` markdown documents by file name. */
export function tallyDocuments(count: number): Map<string, string> {
  const texts = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const paragraphs = Array.from({ length: 1 + (i % 6) }, (_, p) => `Paragraph ${p} of document ${i} about ${WORDS[(i + p) % WORDS.length]} ${"and the lock keeper's log ".repeat(20 + ((i * 7 + p) % 40))}`);
    texts.set(`doc-${String(i).padStart(4, "0")}.md`, `# Document ${i}\n\n${paragraphs.join("\n\n")}\n`);
  }
  return texts;
}

export interface ChunkTally {
  lost: number;
  duplicated: number;
  /** `<file>: <stored> stored, <expected> expected`, one per document that differs. */
  mismatches: string[];
}

/** Counts each document's chunk records in the run's chunk indices (any node of the cluster will do). */
export async function tallyChunks(
  client: QuarryClient,
  opensearchUrl: string,
  opensearchPrefix: string,
  knowledgeBase: string,
  documents: { id: string; fileName: string }[],
  texts: Map<string, string>,
): Promise<ChunkTally> {
  const chunks = `${opensearchPrefix}-chunks-*`;
  await opensearch(opensearchUrl, "POST", `${chunks}/_refresh`);
  const counted = (await opensearch(opensearchUrl, "POST", `${chunks}/_search`, {
    size: 0,
    query: { term: { record_type: "chunk" } },
    aggs: { perDocument: { terms: { field: "document_id", size: documents.length * 2 } } },
  })) as { aggregations: { perDocument: { buckets: { key: string; doc_count: number }[] } } };
  const perDocument = new Map<string, number>(counted.aggregations.perDocument.buckets.map((b) => [b.key, b.doc_count]));
  const tally: ChunkTally = { lost: 0, duplicated: 0, mismatches: [] };
  for (const d of documents) {
    const content = new TextEncoder().encode(texts.get(d.fileName)!);
    const expected = (await client.previewChunks({ fileName: d.fileName, content, knowledgeBase, maxChunks: 1 })).totalChunks;
    const stored = perDocument.get(d.id) ?? 0;
    if (stored < expected) tally.lost += expected - stored;
    if (stored > expected) tally.duplicated += stored - expected;
    if (stored !== expected) tally.mismatches.push(`${d.fileName}: ${stored} stored, ${expected} expected`);
  }
  return tally;
}

/** One REST call to the first node listed. */
export async function opensearch(opensearchUrls: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${opensearchUrls.split(",")[0]!.replace(/\/$/, "")}/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`OpenSearch ${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}
