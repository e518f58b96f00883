// The unanswerable run of `quarry eval-answers`: each question asked with its evidence removed, so
// the right answer is that the knowledge base does not answer it. A question's evidence is every
// document judged relevant to it and every document holding one of its gold answers; the
// documents are disabled (search never returns a disabled document) for that question alone and
// enabled again after it. And the held-out fifth of the questions the goal is quoted on apart.
import { createHash } from "node:crypto";
import type { BeirDocument, BeirQuery, Qrels } from "./beir-dataset.ts";
import { normalizeForMatch } from "./answer-metrics.ts";
import { documentText } from "./run-eval.ts";

/** A question with more evidence than this is skipped: disabling much of a corpus measures another corpus. */
export const MAX_EVIDENCE_DOCUMENTS = 5;

/** Corpus ids of the documents that answer each question; a question over the limit is left out. */
export function evidenceDocuments(queries: readonly BeirQuery[], qrels: Qrels, golds: ReadonlyMap<string, readonly string[]>, corpus: readonly BeirDocument[]): { evidence: Map<string, string[]>; skipped: string[] } {
  const texts = corpus.map((doc) => ({ id: doc.id, text: compact(documentText(doc)) }));
  const evidence = new Map<string, string[]>();
  const skipped: string[] = [];
  for (const query of queries) {
    const ids = new Set(qrels.get(query.id)?.keys() ?? []);
    const needles = (golds.get(query.id) ?? []).map(compact).filter((g) => g.length > 0);
    for (const doc of texts) if (needles.some((n) => doc.text.includes(n))) ids.add(doc.id);
    if (ids.size > MAX_EVIDENCE_DOCUMENTS) skipped.push(query.id);
    else evidence.set(query.id, [...ids]);
  }
  return { evidence, skipped };
}

function compact(text: string): string {
  return normalizeForMatch(text).replace(/\s+/g, "");
}

export type Split = "all" | "dev" | "holdout";
export const SPLITS: readonly Split[] = ["all", "dev", "holdout"];

/**
 * The held-out fifth: a question is in it when the SHA-256 of a fixed salt and its id falls in the
 * first fifth — fixed before any run was looked at, the same on every machine, and independent of
 * the file's order.
 */
export function inHoldout(queryId: string): boolean {
  return createHash("sha256").update(`quarry-answers-holdout-v1:${queryId}`).digest().readUInt32BE(0) % 5 === 0;
}

export function selectSplit<T extends { id: string }>(queries: readonly T[], split: Split): T[] {
  return split === "all" ? [...queries] : queries.filter((q) => inHoldout(q.id) === (split === "holdout"));
}
