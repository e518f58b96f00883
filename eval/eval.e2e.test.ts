// The whole eval command path against a real embedded Quarry: upload through the gateway, the
// pipeline with the local model, the Search RPC in every mode, metrics and JSON lines.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../lib/logger.ts";
import { runEval } from "./eval-command.ts";
import { FIXTURE_DOCS, FIXTURE_QUERIES, writeFixtureDataset } from "./testing/eval-fixture.ts";

function collect(stream: PassThrough): () => string {
  const parts: string[] = [];
  stream.on("data", (chunk: Buffer) => parts.push(chunk.toString("utf8")));
  return () => parts.join("");
}

describe("quarry eval end to end (embedded)", () => {
  let dir: string;
  let lines: Record<string, unknown>[];
  let readErr: () => string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "quarry-eval-e2e-"));
    await writeFixtureDataset(dir);
    const out = new PassThrough();
    const read = collect(out);
    const err = new PassThrough();
    readErr = collect(err);
    const env = { ...process.env };
    delete env.OPENSEARCH_URL;
    await runEval({ dataset: dir, compare: true, json: true, concurrency: 4 }, { out, err, env, logger: silentLogger });
    lines = read().trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("leaves an English set to the embedder's default model, and says so", () => {
    expect(readErr()).toContain("embedding with the embedder's default model (chosen from the corpus's text");
    expect(lines[0].embedding_model).toBe("all-MiniLM-L6-v2-int8");
  });

  it("prints one JSON line per mode with the metric fields", () => {
    expect(lines.map((l) => l.mode)).toEqual(["bm25", "vector", "hybrid"]);
    for (const line of lines) {
      // A failed ingest would zero every metric below; say why instead.
      expect(line.failed_docs, readErr()).toBe(0);
      expect(line).toMatchObject({ backend: "embedded", queries: FIXTURE_QUERIES.length, docs: FIXTURE_DOCS.length });
      for (const field of ["ndcg_at_10", "recall_at_100", "mrr_at_10", "p50_ms", "p95_ms"]) {
        expect(line[field]).toBeTypeOf("number");
        expect(line[field] as number).toBeGreaterThanOrEqual(0);
      }
      expect(line.p95_ms as number).toBeGreaterThanOrEqual(line.p50_ms as number);
      // The long railway document was split, so chunks outnumber documents.
      expect(line.chunks as number).toBeGreaterThan(FIXTURE_DOCS.length);
    }
  });

  it("scores the keyword-matched fixture as nearly perfect for BM25 and well for every mode", () => {
    const [bm25, vector, hybrid] = lines;
    // Every query shares rare words with its one relevant document and with no other, except q20,
    // whose id-twin document would outrank d03 if BEIR's identical-id rule were not applied.
    expect(bm25.ndcg_at_10 as number).toBeGreaterThan(0.95);
    expect(bm25.recall_at_100).toBe(1);
    expect(vector.ndcg_at_10 as number).toBeGreaterThan(0.7);
    expect(hybrid.ndcg_at_10 as number).toBeGreaterThan(0.9);
  });
});

describe("quarry eval of a Chinese set", () => {
  it("creates its base with the model quarry ingest would choose, not the English default", async () => {
    const dir = await mkdtemp(join(tmpdir(), "quarry-eval-zh-"));
    try {
      const docs = [
        { _id: "z1", title: "大熊猫", text: "大熊猫是中国特有的熊科动物，主要栖息在四川、陕西和甘肃的山区，以竹子为主要食物。" },
        { _id: "z2", title: "长江", text: "长江是亚洲最长的河流，全长约六千三百公里，流经中国多个省份，最终注入东海。" },
        { _id: "z3", title: "故宫", text: "故宫位于北京中轴线的中心，是明清两代的皇家宫殿，现为故宫博物院。" },
      ];
      const queries = [
        { _id: "q1", text: "大熊猫主要吃什么？" },
        { _id: "q2", text: "长江最终注入哪里？" },
      ];
      await mkdir(join(dir, "qrels"), { recursive: true });
      await writeFile(join(dir, "corpus.jsonl"), docs.map((d) => JSON.stringify(d)).join("\n") + "\n");
      await writeFile(join(dir, "queries.jsonl"), queries.map((q) => JSON.stringify(q)).join("\n") + "\n");
      await writeFile(join(dir, "qrels", "test.tsv"), "query-id\tcorpus-id\tscore\nq1\tz1\t1\nq2\tz2\t1\n");
      const out = new PassThrough();
      const read = collect(out);
      const err = new PassThrough();
      const readErr = collect(err);
      const env = { ...process.env };
      delete env.OPENSEARCH_URL;
      await runEval({ dataset: dir, mode: "vector", json: true }, { out, err, env, logger: silentLogger });
      const [line] = read().trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(line.failed_docs, readErr()).toBe(0);
      expect(line.embedding_model).toBe("bge-small-zh-v1.5");
      expect(readErr()).toContain("embedding with bge-small-zh-v1.5 (chosen from the corpus's text");
      // MiniLM reads no Han: its vector mode could not rank both right.
      expect(line.ndcg_at_10).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
