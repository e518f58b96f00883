// The real Prometheus scraping distributed Quarry with deploy/observability/prometheus.yml itself
// (only its ports swapped for this run's and its interval shortened): six service processes on
// Kafka, OpenSearch and Tika, an internal token between them and an admin key at the gateway, both
// read by Prometheus from the credential files the config names. The test uploads two documents and
// reads back through Prometheus' query API that every process is up, that each stage's handled
// counter on its own process moved by exactly two, that the gateway's UploadDocument histogram did,
// and that the pipeline's consumer lag on Kafka drained to zero.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { gatewayClient, type QuarryClient } from "../../client/gateway-client.ts";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { ServicePorts } from "../../lib/config.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { lastUpdate, upload, watchAll } from "../e2e/e2e-helpers.ts";
import { SERVICE_NAMES, startDistributedQuarry, type DistributedQuarry } from "../support/distributed-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { prometheusBinary, startPrometheus, type RunningPrometheus } from "../support/prometheus-process.ts";
import { freePort } from "../../lib/testing/free-port.ts";
import { describeWithAllEngines } from "./engines-all.ts";

const STAGES = ["parser", "chunker", "embedder", "index"] as const;

describeWithAllEngines("Prometheus scraping distributed Quarry", (engines) =>
  describeWith(prometheusBinary, "with deploy/observability/prometheus.yml", (binary) => {
    const key = `metrics-admin-${randomBytes(12).toString("hex")}`;
    const token = `metrics-internal-${randomBytes(12).toString("hex")}`;
    let stub: OpenAiStub;
    let quarry: DistributedQuarry;
    let client: QuarryClient;
    let prometheus: RunningPrometheus;
    let promUrl = "";
    let dir = "";

    /** One number from an instant query (one that matches nothing reads as 0). */
    const query = async (promql: string): Promise<number> => {
      const res = await fetch(`${promUrl}/api/v1/query?${new URLSearchParams({ query: `sum(${promql}) or vector(0)` })}`);
      const body = (await res.json()) as { status: string; data: { result: { value: [number, string] }[] } };
      expect(body.status, JSON.stringify(body)).toBe("success");
      return Number(body.data.result[0]?.value[1] ?? 0);
    };

    beforeAll(async () => {
      stub = await startOpenAiStub();
      quarry = await startDistributedQuarry({
        ...engines,
        env: {
          QUARRY_INTERNAL_TOKEN: token,
          QUARRY_API_KEY: key,
          QUARRY_EMBEDDING_PROVIDER: "openai",
          QUARRY_EMBEDDING_BASE_URL: stub.url,
          QUARRY_EMBEDDING_MODEL: "stub-hashing",
          QUARRY_EMBEDDING_DIMENSION: "384",
        },
      });
      client = gatewayClient(quarry.url, key);
      dir = await mkdtemp(join(tmpdir(), "quarry-prometheus-dist-"));
      // The shipped file, with this run's ports for the standard ones and a 1 s interval.
      let config = readFileSync(resolve("deploy/observability/prometheus.yml"), "utf8").replace(/scrape_interval: \d+s/, "scrape_interval: 1s");
      for (const name of SERVICE_NAMES) config = config.replace(`"127.0.0.1:${ServicePorts[name]}"`, `"127.0.0.1:${quarry.services[name].port}"`);
      await writeFile(join(dir, "prometheus.yml"), config);
      await writeFile(join(dir, "quarry-admin-key"), key);
      await writeFile(join(dir, "quarry-internal-token"), token);
      const port = await freePort();
      promUrl = `http://127.0.0.1:${port}`;
      prometheus = startPrometheus(binary, dir, port);
    }, 300_000);

    afterAll(async () => {
      await prometheus?.stop();
      await quarry?.stop();
      await stub?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    }, 60_000);

    it("scrapes every process, and the stage counters, the RPC histogram and the consumer lag move by what the test did", async () => {
      // Every target scraped with its credentials (a refused scrape reads as up 0).
      for (const name of SERVICE_NAMES) {
        await expect.poll(() => query(`up{quarry_process="${name}"}`), { timeout: 90_000, interval: 500, message: `${name} up\n${prometheus.output().slice(-2000)}` }).toBe(1);
      }
      const handled = (stage: string) => `quarry_stage_events_total{quarry_process="${stage}",stage="${stage}",outcome="handled"}`;
      const uploads = `quarry_rpc_server_duration_seconds_count{quarry_process="gateway",service="quarry.gateway.v1.QuarryService",method="UploadDocument",code="ok"}`;
      const lag = (stage: string) => `quarry_bus_pending_events{quarry_process="${stage}",group=~".*${stage.replace(".", "\\\\.")}"}`;
      const before = new Map<string, number>();
      for (const q of [...STAGES.map(handled), uploads]) before.set(q, await query(q));

      await client.createKnowledgeBase({ name: "scraped" });
      const ids: string[] = [];
      for (const [name, text] of [
        ["locks.txt", "Close the lower gates before opening the top paddles of a canal lock."],
        ["weirs.txt", "A weir holds the water level of a canal pound; the overflow runs around the lock."],
      ]) {
        ids.push((await upload(client, "scraped", name, new TextEncoder().encode(text))).document!.id);
      }
      const log = await watchAll(client, ids);
      for (const id of ids) expect(lastUpdate(log, id).status).toBe(DocumentStatus.READY);

      const results: string[] = [];
      for (const q of [...STAGES.map(handled), uploads]) {
        await expect.poll(() => query(q), { timeout: 60_000, interval: 500, message: q }).toBe(before.get(q)! + 2);
        results.push(`${q}: ${before.get(q)} → ${before.get(q)! + 2}`);
      }
      // Each stage's process reports its own group's lag, read from Kafka at scrape time: drained.
      for (const stage of STAGES) {
        await expect.poll(() => query(`count(${lag(stage)})`), { timeout: 60_000, interval: 500, message: `lag of ${stage} reported` }).toBeGreaterThan(0);
        await expect.poll(() => query(lag(stage)), { timeout: 60_000, interval: 500, message: `lag of ${stage}` }).toBe(0);
        results.push(`${lag(stage)}: ${await query(`count(${lag(stage)})`)} series, sum 0`);
      }
      console.info(`Prometheus query results (sum of each):\n${results.join("\n")}`);
    }, 300_000);
  }),
);
