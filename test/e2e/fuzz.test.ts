// The fuzz suite: a few hundred seeded hostile uploads (see bench/fuzz-inputs.ts) through
// PreviewChunks and upload on a real embedded Quarry. Every input must end READY, FAILED with a
// reason a person can read, or be refused with a code that blames the input — and the process that
// serves them must not notice (no unhandled rejection, no crash). `quarry bench fuzz --count N`
// runs the same generator for longer. QUARRY_FUZZ_SEED picks another seed for a local run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fuzzInputs, fuzzSeeds, FUZZ_KINDS } from "../../bench/fuzz-inputs.ts";
import { runFuzz, summarize } from "../../bench/fuzz-run.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";

const SEED = Number(process.env.QUARRY_FUZZ_SEED ?? 20261130);
const COUNT = 200;

describe("fuzzing uploads on a real embedded server", () => {
  let quarry: EmbeddedQuarryFixture;
  const stray: unknown[] = [];
  const onStray = (reason: unknown) => stray.push(reason);

  beforeAll(async () => {
    process.on("unhandledRejection", onStray);
    // No redrives: a failure wrongly taken for a backend's ends "gave up" at once and is flagged.
    quarry = await startEmbeddedQuarry({ env: { QUARRY_MAX_REDRIVES: "0" } });
    await quarry.client.createKnowledgeBase({ name: "fuzz" });
  }, 120_000);
  afterAll(async () => {
    process.off("unhandledRejection", onStray);
    await quarry?.stop();
  });

  it(`${COUNT} seeded inputs: each READY, FAILED with a readable reason or refused as the input's fault; no crash`, async () => {
    const outcomes = await runFuzz({ client: quarry.client, knowledgeBase: "fuzz", inputs: fuzzInputs(SEED, COUNT, await fuzzSeeds()) });
    expect(outcomes).toHaveLength(COUNT);
    const problems = outcomes.filter((o) => o.problems.length > 0).map((o) => `#${o.index} ${o.fileName}: ${o.problems.join("; ")}`);
    expect(problems, `seed ${SEED}`).toEqual([]);
    expect(stray).toEqual([]);
    // Every recipe ran, and the suite is not trivially all-refused: some inputs do ingest.
    const byKind = summarize(outcomes);
    expect([...byKind.keys()].sort()).toEqual([...FUZZ_KINDS].sort());
    expect(outcomes.filter((o) => o.ingest === "READY").length).toBeGreaterThan(10);
    // Since the reading rule, junk that decodes as text is refused at upload (REFUSED) rather than
    // FAILED by the parser; both paths must still be exercised (seed 20261130: 69 failed).
    expect(outcomes.filter((o) => o.ingest === "FAILED" || o.ingest === "REFUSED").length).toBeGreaterThan(100);
    expect(outcomes.filter((o) => o.ingest === "FAILED").length).toBeGreaterThan(30);
    expect(outcomes.filter((o) => o.ingest === "REFUSED").length).toBeGreaterThan(10);
    expect((await quarry.client.listKnowledgeBases({})).knowledgeBases.map((kb) => kb.name)).toContain("fuzz");
  }, 400_000);
});
