import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidInputError, NotFoundError } from "../lib/errors.ts";
import { loadBeirDataset, readAnswers, readQrels } from "./beir-dataset.ts";
import { FIXTURE_DOCS, FIXTURE_QUERIES, writeFixtureDataset } from "./testing/eval-fixture.ts";

describe("loadBeirDataset", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "beir-fixture-"));
    await writeFixtureDataset(dir);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("keeps only judged queries, in file order, and the whole corpus", async () => {
    const data = await loadBeirDataset(dir);
    expect(data.queries.map((q) => q.id)).toEqual(FIXTURE_QUERIES.map((q) => q.id));
    expect(data.corpus).toHaveLength(FIXTURE_DOCS.length);
    expect(data.corpusSize).toBe(FIXTURE_DOCS.length);
    expect(data.corpus[0]).toEqual({ id: "d01", title: "Honeybee waggle dance", text: FIXTURE_DOCS[0].text });
    expect(data.qrels.get("q19")).toEqual(new Map([["d19", 1]]));
  });

  it("with --limit-docs keeps every relevant document of the evaluated queries, then distractors", async () => {
    const data = await loadBeirDataset(dir, { limitQueries: 2, limitDocs: 4 });
    expect(data.queries.map((q) => q.id)).toEqual(["q01", "q02"]);
    const ids = data.corpus.map((d) => d.id);
    expect(ids).toHaveLength(4);
    expect(ids).toEqual(expect.arrayContaining(["d01", "d02"]));
  });

  it("says which file is missing", async () => {
    await expect(loadBeirDataset(join(dir, "qrels"))).rejects.toBeInstanceOf(NotFoundError);
  });

  it("drops judgements of 0, skips the header and rejects malformed lines", async () => {
    const other = await mkdtemp(join(tmpdir(), "beir-qrels-"));
    try {
      await writeFixtureDataset(other);
      await writeFile(join(other, "qrels", "test.tsv"), "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td3\t1\n");
      const qrels = await readQrels(other);
      expect([...qrels.keys()]).toEqual(["q1", "q2"]);
      expect(qrels.get("q1")).toEqual(new Map([["d1", 2]]));
      await writeFile(join(other, "qrels", "test.tsv"), "query-id\tcorpus-id\tscore\nq1 d1\n");
      await expect(readQrels(other)).rejects.toBeInstanceOf(InvalidInputError);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe("readAnswers", () => {
  it("reads the gold answers, dropping empty ones, and says what is missing", async () => {
    const answers = await readAnswers(join(import.meta.dirname, "fixtures", "answers-mini"));
    expect(answers.get("q3")).toEqual(["nine bars", "about nine bars"]);
    expect(answers.has("q7")).toBe(false);
    const dir = await mkdtemp(join(tmpdir(), "beir-no-answers-"));
    try {
      await expect(readAnswers(dir)).rejects.toThrow(/has no answers\.jsonl/);
      await expect(readAnswers(dir)).rejects.toBeInstanceOf(NotFoundError);
      await writeFile(join(dir, "answers.jsonl"), '{"_id": "q1", "answers": "not a list"}\n');
      await expect(readAnswers(dir)).rejects.toThrow(/answers.jsonl:1 has no "answers" list of strings/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
