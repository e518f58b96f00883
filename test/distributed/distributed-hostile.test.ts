// The fuzz suite and the protocol edges in distributed mode: six service processes on Kafka,
// OpenSearch and Tika. Seeded hostile uploads (bench/fuzz-inputs.ts) end READY, FAILED with a
// readable reason or refused as the input's fault; no service process exits; an undecodable
// request body is invalid_argument at the gateway and at an internal service alike.
import { afterAll, beforeAll, expect, it } from "vitest";
import { fuzzInputs, fuzzSeeds } from "../../bench/fuzz-inputs.ts";
import { runFuzz } from "../../bench/fuzz-run.ts";
import { SERVICE_NAMES, startDistributedQuarry, type DistributedQuarry } from "../support/distributed-quarry.ts";
import { describeWithAllEngines } from "./engines-all.ts";

const SEED = 20261130;
const COUNT = 60;

describeWithAllEngines("Quarry distributed under hostile input", (engines) => {
  let quarry: DistributedQuarry;

  beforeAll(async () => {
    // No redrives: a failure wrongly taken for a backend's ends "gave up" at once and is flagged.
    quarry = await startDistributedQuarry({ ...engines, env: { QUARRY_MAX_REDRIVES: "0" } });
    await quarry.client.createKnowledgeBase({ name: "fuzz" });
  }, 240_000);
  afterAll(async () => {
    await quarry?.stop();
  }, 60_000);

  it(`${COUNT} seeded inputs through PreviewChunks and upload: no problem, no service process lost`, async () => {
    const outcomes = await runFuzz({ client: quarry.client, knowledgeBase: "fuzz", inputs: fuzzInputs(SEED, COUNT, await fuzzSeeds()) });
    const problems = outcomes.filter((o) => o.problems.length > 0).map((o) => `#${o.index} ${o.fileName}: ${o.problems.join("; ")}`);
    expect(problems, `seed ${SEED}`).toEqual([]);
    expect(outcomes.filter((o) => o.ingest === "READY").length).toBeGreaterThan(3);
    for (const name of SERVICE_NAMES) {
      expect(() => process.kill(quarry.services[name].pid, 0), `${name} exited:\n${quarry.logTail(name)}`).not.toThrow();
    }
  }, 400_000);

  it("answers invalid_argument to an undecodable request body at the gateway and at an internal service", async () => {
    const garbage = Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    for (const [url, path] of [
      [quarry.url, "/quarry.gateway.v1.QuarryService/PreviewChunks"],
      [quarry.services.parser.url, "/quarry.parser.v1.ParserService/Parse"],
    ]) {
      const res = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/proto" }, body: garbage });
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe("invalid_argument");
    }
  });
});
