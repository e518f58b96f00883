// BM25 on every index backend side by side: whether SQLite (FTS5), OpenSearch and Elasticsearch agree
// on keyword retrieval. Each corpus document is cut as an ingest cuts it (eval's Markdown upload text,
// the Markdown parser, the chunker with the default model's word pieces) and written straight into
// each backend's own SearchEngine (importDocuments: the index path an import takes, with the same
// segmenting and stemming as an ingest), then every judged query is asked through engine.search in
// bm25 mode, top 200 chunks, documents scored by their best chunk — as `quarry eval` scores them.
// BM25 reads no vector, so every chunk carries the same placeholder; skipping the upload, parse and
// embed queue makes a run minutes instead of an hour on a loaded CPU. `quarry eval --mode bm25
// --backend embedded|opensearch|elasticsearch` is the same measure through the whole product.
// A backend whose variable (OPENSEARCH_URL, ELASTICSEARCH_URL) is unset is left out; --backend
// (sqlite, opensearch, elasticsearch; repeatable) keeps only those named.
//
//   node --import tsx eval/keyword-backends-study.ts --dataset ../shared/eval/scifact [--backend elasticsearch]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import { Client as ElasticsearchClient } from "@elastic/elasticsearch";
import type { EmbeddedChunk } from "../lib/domain.ts";
import { WordPieceTokenCounter } from "../lib/tokens/wordpiece-token-counter.ts";
import { chunkDocument, defaultChunkingSettings } from "../services/chunker/index.ts";
import { defaultModelDir } from "../services/embedder/index.ts";
import { deleteElasticsearchNamespace, deleteOpenSearchNamespace, type SearchEngine, openDatabase, SqliteSearchEngine } from "../services/index/index.ts";
import { ElasticsearchSearchEngine, OpenSearchSearchEngine, type ImportedDocumentChunks } from "../services/index/lab.ts";
import { parseMarkdown } from "../services/parser/index.ts";
import { documentRanking, summarize, type MetricSummary } from "./metrics.ts";
import { documentText } from "./run-eval.ts";
import { loadStudyDataset } from "./study-dataset.ts";

const { values } = parseArgs({ options: { dataset: { type: "string" }, backend: { type: "string", multiple: true } } });
const dataset = await loadStudyDataset("keyword-backends-study.ts", values.dataset);
const counter = WordPieceTokenCounter.fromModelDir(defaultModelDir());
const maxInputTokens = 256;
const settings = defaultChunkingSettings(maxInputTokens);
const DIMENSION = 4;
const PLACEHOLDER = new Float32Array([1, 0, 0, 0]);
const KB = "kb_keyword_study";

const documents: ImportedDocumentChunks[] = dataset.corpus.map((doc) => {
  const parsed = { ...parseMarkdown(documentText(doc)), mimeType: "text/markdown", parser: "builtin:markdown" };
  const chunks: EmbeddedChunk[] = chunkDocument(parsed, settings, counter, { maxInputTokens }).map((draft) => ({
    ...draft,
    id: `${doc.id}-${draft.index}`,
    documentId: doc.id,
    knowledgeBaseId: KB,
    vector: PLACEHOLDER,
  }));
  return { documentId: doc.id, fileName: `${doc.id}.md`, enabled: true, chunks };
});
const chunkCount = documents.reduce((sum, d) => sum + d.chunks.length, 0);
process.stderr.write(`${dataset.corpus.length} documents, ${chunkCount} chunks, ${dataset.queries.length} judged queries\n`);

async function measure(engine: SearchEngine): Promise<MetricSummary & { ingestSeconds: number; querySeconds: number }> {
  const started = performance.now();
  await engine.ensureKnowledgeBase(KB, DIMENSION);
  for (let i = 0; i < documents.length; i += 250) await engine.importDocuments(KB, documents.slice(i, i + 250));
  await engine.finishImport(KB);
  const ingested = performance.now();
  const runs = new Map<string, string[]>();
  for (const q of dataset.queries) {
    const hits = await engine.search({ knowledgeBaseIds: [KB], text: q.text, mode: "bm25", topK: 200, minScore: 0, documentIds: [] });
    runs.set(q.id, documentRanking(q.id, hits.map((h) => h.chunk.documentId)));
  }
  return { ...summarize(dataset.qrels, runs), ingestSeconds: (ingested - started) / 1000, querySeconds: (performance.now() - ingested) / 1000 };
}

type Backend = { name: string; key: string; open(): Promise<{ engine: SearchEngine; cleanup(): Promise<void> }> };
const prefix = `quarry-study-${randomBytes(4).toString("hex")}-`;
const backends: Backend[] = [
  {
    name: "SQLite (FTS5)",
    key: "sqlite",
    async open() {
      const dir = await mkdtemp(join(tmpdir(), "quarry-keyword-study-"));
      const engine = new SqliteSearchEngine(openDatabase(join(dir, "quarry.db")), { ownsDatabase: true });
      return { engine, cleanup: () => rm(dir, { recursive: true, force: true }) };
    },
  },
];
const opensearch = process.env.OPENSEARCH_URL?.trim();
if (opensearch) {
  backends.push({
    name: "OpenSearch",
    key: "opensearch",
    async open() {
      const engine = new OpenSearchSearchEngine(new OpenSearchClient({ node: opensearch }), { indexPrefix: `${prefix}chunks-`, ownsClient: true });
      return { engine, cleanup: () => deleteOpenSearchNamespace(opensearch, prefix) };
    },
  });
}
const elasticsearch = process.env.ELASTICSEARCH_URL?.trim();
if (elasticsearch) {
  backends.push({
    name: "Elasticsearch",
    key: "elasticsearch",
    async open() {
      const engine = new ElasticsearchSearchEngine(new ElasticsearchClient({ node: elasticsearch }), { indexPrefix: `${prefix}chunks-`, ownsClient: true });
      return { engine, cleanup: () => deleteElasticsearchNamespace(elasticsearch, prefix) };
    },
  });
}

const rows: string[] = ["| backend | nDCG@10 | Recall@100 | MRR@10 | import s | queries s |", "| --- | ---: | ---: | ---: | ---: | ---: |"];
process.stdout.write(rows.join("\n") + "\n");
for (const backend of backends.filter((b) => !values.backend || values.backend.includes(b.key))) {
  const { engine, cleanup } = await backend.open();
  try {
    const m = await measure(engine);
    const row = `| ${backend.name} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} | ${m.mrrAt10.toFixed(4)} | ${m.ingestSeconds.toFixed(0)} | ${m.querySeconds.toFixed(0)} |`;
    process.stdout.write(row + "\n");
  } finally {
    await engine.close();
    await cleanup();
  }
}
