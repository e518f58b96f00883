// The whole eval command path against a real embedded Quarry: upload through the gateway, the
// pipeline with the local model, the Search RPC in every mode, metrics and JSON lines.
import { mkdtemp, rm } from "node:fs/promises";
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
