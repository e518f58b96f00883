// The measurements behind issue #14 (why Quarry's vector and hybrid lists lose on long documents
// and long questions), one candidate cause at a time, on any BEIR folder:
//
//   node --import tsx eval/long-document-study.ts --dataset ../shared/eval/arguana-public \
//     --cache /tmp/study [--url http://127.0.0.1:PORT --knowledge-base NAME] [--limit-queries N]
//
// Dense rows embed offline with the knowledge base's model (the whole-document baseline, Quarry's
// chunks with and without the heading path, other chunk sizes, long-question handling), searched
// exhaustively with MaxP. With --url it also fetches Quarry's own BM25, vector and hybrid lists of
// an ingested base (`quarry eval --data-dir D --knowledge-base NAME` keeps one) and fuses them
// client-side at chunk and at document level, at several candidate depths. Vectors and fetched
// lists are cached under --cache, so a second run only re-scores.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gatewayClient } from "../client/gateway-client.ts";
import type { ChunkingSettings } from "../lib/domain.ts";
import { withHeadingPath } from "../lib/chunk-context.ts";
import { WordPieceTokenCounter } from "../lib/tokens/wordpiece-token-counter.ts";
import { chunkDocument, defaultChunkingSettings } from "../services/chunker/index.ts";
import { defaultModelDir, OnnxEmbedder } from "../services/embedder/index.ts";
import { parseMarkdown } from "../services/parser/index.ts";
import { DEFAULT_RRF_K } from "../services/index/lab.ts";
import type { BeirDocument } from "./beir-dataset.ts";
import { loadStudyDataset } from "./study-dataset.ts";
import { denseRuns, embedCorpus, wholeDocument, type DenseHit, type Representation } from "./dense-baseline.ts";
import { documentRanking, summarize } from "./metrics.ts";
import { documentText, MODE_TO_PROTO, startEvalTarget, type EvalMode } from "./run-eval.ts";
import { createLogger } from "../lib/logger.ts";

const { values } = parseArgs({
  options: {
    dataset: { type: "string" },
    cache: { type: "string", default: "/tmp/long-document-study" },
    url: { type: "string" },
    "data-dir": { type: "string" },
    "knowledge-base": { type: "string" },
    "limit-queries": { type: "string" },
    only: { type: "string" },
    // Offline variants on the documents whose id starts with this (a cheaper corpus; the
    // whole-document vectors of the full corpus are reused for it from the cache).
    "corpus-prefix": { type: "string" },
  },
});
const fullDataset = await loadStudyDataset("long-document-study.ts", values.dataset, { limitQueries: values["limit-queries"] ? Number(values["limit-queries"]) : undefined });
const cache = values.cache!;
await mkdir(cache, { recursive: true });
const prefix = values["corpus-prefix"] ?? "";
const dataset = prefix ? { ...fullDataset, corpus: fullDataset.corpus.filter((d) => d.id.startsWith(prefix)) } : fullDataset;
const queries = dataset.queries;
const modelDir = defaultModelDir();
const counter = WordPieceTokenCounter.fromModelDir(modelDir);
// Questions cut at the model's input, as the issue's whole-document baseline embeds them.
const embedder = await OnnxEmbedder.load(modelDir, { threads: 1, readWhole: [] });
const maxInputTokens = embedder.info().maxInputTokens;
const only = values.only ? new Set(values.only.split(",")) : undefined;

/** Document → its chunks as Quarry cuts them (the uploaded Markdown, the chunker), as retrieval reads them. */
function quarryChunks(settings: ChunkingSettings, headingPath: boolean): Representation {
  return (doc: BeirDocument) => {
    const parsed = { ...parseMarkdown(documentText(doc)), mimeType: "text/markdown", parser: "builtin:markdown" };
    return chunkDocument(parsed, settings, counter, { maxInputTokens }).map((c) => (headingPath ? withHeadingPath(c.text, c.sectionPath) : c.text));
  };
}

const defaults = defaultChunkingSettings(maxInputTokens);
const sized = (chunkSize: number): ChunkingSettings => ({ ...defaults, chunkSize, chunkOverlap: Math.floor(chunkSize * 0.15) });
const representations: [string, Representation][] = [
  ["dense whole document (title + text, cut at the model's limit)", wholeDocument],
  ["dense whole document, text only", (doc) => [doc.text]],
  [`quarry chunks ${defaults.chunkSize}/${defaults.chunkOverlap} + heading path, MaxP`, quarryChunks(defaults, true)],
  [`quarry chunks ${defaults.chunkSize}/${defaults.chunkOverlap}, no heading path, MaxP`, quarryChunks(defaults, false)],
  ["quarry chunks 254/38 + heading path, MaxP", quarryChunks(sized(254), true)],
  ["quarry chunks 128/19 + heading path, MaxP", quarryChunks(sized(128), true)],
];

const table: string[] = [];
const row = (name: string, runs: ReadonlyMap<string, readonly string[]>, units = "") => {
  const m = summarize(dataset.qrels, runs);
  const line = `| ${name} | ${units} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} | ${m.mrrAt10.toFixed(4)} |`;
  table.push(line);
  process.stdout.write(line + "\n");
};
const ids = (runs: Map<string, DenseHit[]>) => new Map([...runs].map(([q, hits]) => [q, hits.map((h) => h.docId)]));

process.stdout.write(`${values.dataset}: ${queries.length} queries, ${dataset.corpus.length} documents, ${embedder.info().model}\n`);
process.stdout.write("| representation | vectors | nDCG@10 | Recall@100 | MRR@10 |\n| --- | ---: | ---: | ---: | ---: |\n");
const denseLists = new Map<string, Map<string, DenseHit[]>>();
for (const [i, [name, represent]] of representations.entries()) {
  if (only && !only.has(String(i))) continue;
  const started = performance.now();
  const units = await embedCorpus(embedder, dataset.corpus, represent, {
    cacheFile: join(cache, `dense-${i}${prefix ? `-${prefix}` : ""}-${embedder.info().model}.f32`),
    onProgress: (done, total) => process.stderr.write(`${name}: ${done}/${total} (${((performance.now() - started) / 1000).toFixed(0)} s)\n`),
  });
  const runs = await denseRuns(embedder, units, queries);
  denseLists.set(String(i), runs);
  await writeFile(join(cache, `dense-run-${i}${prefix ? `-${prefix}` : ""}.json`), JSON.stringify([...runs]));
  row(name, ids(runs), String(units.owner.length));
}

// Long questions: the rows above cut each question at the model's input, as the issue's baseline
// does; Quarry's embedder reads a longer question whole (windows of the model's input, averaged).
if (!only || only.has("q")) {
  const whole = await embedCorpus(embedder, dataset.corpus, wholeDocument, { cacheFile: join(cache, `dense-0${prefix ? `-${prefix}` : ""}-${embedder.info().model}.f32`) });
  const readsQuestionsWhole = await OnnxEmbedder.load(modelDir, { threads: 1 });
  const longQuestions = queries.filter((q) => counter.count(q.text) > maxInputTokens - 2).length;
  row(`whole document, question read whole (${longQuestions} questions longer than the model's input)`, ids(await denseRuns(readsQuestionsWhole, whole, queries)), String(whole.owner.length));
  await readsQuestionsWhole.close();
}

// Quarry's own lists of an ingested base, and fusion variants on them.
if ((values.url || values["data-dir"]) && values["knowledge-base"]) {
  const target = values.url
    ? { url: values.url, stop: async () => {} }
    : await startEvalTarget("embedded", { ...process.env }, createLogger("study", "warn"), { dataDir: values["data-dir"] });
  const client = gatewayClient(target.url);
  const knowledgeBase = values["knowledge-base"];
  type Hit = { doc: string; chunk: string; score: number };
  const fetchList = async (mode: EvalMode, topK: number): Promise<Map<string, Hit[]>> => {
    const file = join(cache, `quarry-${knowledgeBase}-${mode}-${topK}-${queries.length}.json`);
    const cached = await readFile(file, "utf8").catch(() => undefined);
    if (cached) return new Map(JSON.parse(cached) as [string, Hit[]][]);
    const lists = new Map<string, Hit[]>();
    for (const [i, q] of queries.entries()) {
      try {
        const res = await client.search({ query: q.text, knowledgeBases: [knowledgeBase], settings: { mode: MODE_TO_PROTO[mode], topK, minScore: 0 } });
        lists.set(q.id, res.hits.map((h) => ({ doc: h.fileName.replace(/\.(md|txt)$/, ""), chunk: h.chunk!.id, score: h.score })));
      } catch (error) {
        process.stderr.write(`${mode} ${q.id}: ${(error as Error).message.slice(0, 120)}\n`);
        lists.set(q.id, []);
      }
      if (i % 100 === 0) process.stderr.write(`quarry ${mode}: ${i}/${queries.length}\n`);
    }
    await writeFile(file, JSON.stringify([...lists]));
    return lists;
  };
  // 800 per list is what Quarry's hybrid fuses for top_k 200 (max(top_k × 4, 50)), so chunk-level
  // RRF at depth 800 below is its hybrid mode, computed on the same lists.
  const bm25 = await fetchList("bm25", 800);
  const vector = await fetchList("vector", 800);
  for (const key of ["0", "2"]) {
    if (denseLists.has(key)) continue;
    const saved = await readFile(join(cache, `dense-run-${key}${prefix ? `-${prefix}` : ""}.json`), "utf8").catch(() => undefined);
    if (saved) denseLists.set(key, new Map(JSON.parse(saved) as [string, DenseHit[]][]));
  }
  const maxP = (hits: Hit[], qid: string) => documentRanking(qid, hits.map((h) => h.doc));
  const byQuery = (f: (qid: string) => string[]) => new Map(queries.map((q) => [q.id, f(q.id)]));
  row("quarry bm25 (chunks, MaxP)", byQuery((q) => maxP(bm25.get(q)!, q)));
  row("quarry vector (chunks, MaxP)", byQuery((q) => maxP(vector.get(q)!, q)));
  const rrf = (lists: string[][], k = DEFAULT_RRF_K) => {
    const score = new Map<string, number>();
    for (const list of lists) list.forEach((id, r) => score.set(id, (score.get(id) ?? 0) + 1 / (k + r + 1)));
    return [...score.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([id]) => id);
  };
  for (const depth of [50, 100, 200, 400, 800]) {
    row(
      `client chunk-level RRF, ${depth} chunks per list`,
      byQuery((q) => {
        const docOf = new Map([...bm25.get(q)!, ...vector.get(q)!].map((h) => [h.chunk, h.doc]));
        const fused = rrf([bm25.get(q)!.slice(0, depth).map((h) => h.chunk), vector.get(q)!.slice(0, depth).map((h) => h.chunk)]);
        return documentRanking(q, fused.map((c) => docOf.get(c)!));
      }),
    );
    row(
      `client document-level RRF (MaxP each list first), ${depth} chunks per list`,
      byQuery((q) => documentRanking(q, rrf([maxP(bm25.get(q)!.slice(0, depth), q), maxP(vector.get(q)!.slice(0, depth), q)]))),
    );
  }
  for (const [key, label] of [["0", "whole-document vector"], ["2", "offline chunk vector"]] as const) {
    const dense = denseLists.get(key);
    if (!dense) continue;
    row(
      `document-level RRF: quarry bm25 + ${label} (200 docs each)`,
      byQuery((q) => documentRanking(q, rrf([maxP(bm25.get(q)!, q).slice(0, 200), dense.get(q)!.slice(0, 200).map((h) => h.docId)]))),
    );
    row(
      `document-level RRF: quarry bm25 + quarry vector + ${label} (200 docs each)`,
      byQuery((q) =>
        documentRanking(q, rrf([maxP(bm25.get(q)!, q).slice(0, 200), maxP(vector.get(q)!, q).slice(0, 200), dense.get(q)!.slice(0, 200).map((h) => h.docId)])),
      ),
    );
  }
  const whole = denseLists.get("0");
  if (whole) {
    // Don't split what the model reads whole: a document within the model's input limit is
    // represented by its whole-document vector, a longer one by its best chunk (cosines compare).
    const fits = new Set(dataset.corpus.filter((d) => counter.count(`${d.title} ${d.text}`) <= maxInputTokens - 2).map((d) => d.id));
    row(
      `vector: whole-document vector where the document fits (${fits.size} of ${dataset.corpus.length}), best chunk otherwise`,
      byQuery((q) => {
        const score = new Map<string, number>();
        for (const h of whole.get(q)!) if (fits.has(h.docId)) score.set(h.docId, h.score);
        for (const h of vector.get(q)!) if (!fits.has(h.doc) && !score.has(h.doc)) score.set(h.doc, h.score);
        return documentRanking(q, [...score].sort((a, b) => b[1] - a[1]).map(([id]) => id));
      }),
    );
    row(
      "vector: max(whole-document cosine, best chunk cosine)",
      byQuery((q) => {
        const score = new Map<string, number>();
        for (const h of whole.get(q)!) score.set(h.docId, h.score);
        for (const h of vector.get(q)!) if (h.score > (score.get(h.doc) ?? -Infinity)) score.set(h.doc, h.score);
        return documentRanking(q, [...score].sort((a, b) => b[1] - a[1]).map(([id]) => id));
      }),
    );
    row(
      "document-level RRF: quarry vector + whole-document vector (200 docs each)",
      byQuery((q) => documentRanking(q, rrf([maxP(vector.get(q)!, q).slice(0, 200), whole.get(q)!.slice(0, 200).map((h) => h.docId)]))),
    );
  }
  await target.stop();
}
await writeFile(join(cache, `table-${Date.now()}.md`), table.join("\n") + "\n");
await embedder.close();
