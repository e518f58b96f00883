// The real Prometheus (Debian's `prometheus`, a plain process with its own config and data folder)
// scrapes an embedded Quarry's /metrics with an admin key as its bearer token; the test uploads two
// documents, searches and asks, and reads back through Prometheus' query API that the stage
// counters and the RPC histograms moved by exactly that, and that the pipeline's backlog drained.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { gatewayClient, type QuarryClient } from "../../client/gateway-client.ts";
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { prometheusBinary, startPrometheus, type RunningPrometheus } from "../support/prometheus-process.ts";
import { freePort } from "../../lib/testing/free-port.ts";
import { collectChat, upload } from "./e2e-helpers.ts";

describeWith(prometheusBinary, "Prometheus scraping an embedded Quarry", (binary) => {
  const key = `metrics-test-${randomBytes(12).toString("hex")}`;
  let quarry: EmbeddedQuarryFixture;
  let client: QuarryClient;
  let prometheus: RunningPrometheus;
  let promUrl: string;
  let dir: string;

  /** One number from an instant query (a query that matches nothing reads as 0). */
  const query = async (promql: string): Promise<number> => {
    const res = await fetch(`${promUrl}/api/v1/query?${new URLSearchParams({ query: `sum(${promql}) or vector(0)` })}`);
    const body = (await res.json()) as { status: string; data: { result: { value: [number, string] }[] } };
    expect(body.status, JSON.stringify(body)).toBe("success");
    return Number(body.data.result[0]?.value[1] ?? 0);
  };
  /** Waits (without sleeping on a guess) until Prometheus has scraped the value; fails if it never does. */
  const eventually = (promql: string, expected: number) => expect.poll(() => query(promql), { timeout: 60_000, interval: 500 }).toBe(expected);

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry({ env: { QUARRY_API_KEY: key } });
    client = gatewayClient(quarry.url, key);
    dir = await mkdtemp(join(tmpdir(), "quarry-prometheus-"));
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    await writeFile(
      join(dir, "prometheus.yml"),
      [
        "global: { scrape_interval: 1s, evaluation_interval: 1s }",
        "scrape_configs:",
        "  - job_name: quarry",
        "    metrics_path: /metrics",
        `    authorization: { type: Bearer, credentials: "${key}" }`,
        `    static_configs: [{ targets: ["${new URL(quarry.url).host}"] }]`,
        "",
      ].join("\n"),
    );
    prometheus = startPrometheus(binary, dir, port);
  }, 180_000);

  afterAll(async () => {
    await prometheus?.stop();
    await quarry?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("sees the stage counters, the backlog and the RPC histograms move by what the test did", async () => {
    // Prometheus up, and one scrape of the Quarry done (with the key: a refused scrape reads as up 0).
    const up = () => fetch(`${promUrl}/api/v1/query?query=up`).then((r) => r.json(), () => undefined) as Promise<{ data?: { result?: { value: [number, string] }[] } } | undefined>;
    await expect.poll(async () => (await up())?.data?.result?.[0]?.value[1], { timeout: 60_000, interval: 250, message: prometheus.output() }).toBe("1");
    const stages = ["parser", "chunker", "embedder", "index"];
    const handled = (stage: string) => `quarry_stage_events_total{stage="${stage}",outcome="handled"}`;
    const rpcs = (method: string) => `quarry_rpc_server_duration_seconds_count{service="quarry.gateway.v1.QuarryService",method="${method}",code="ok"}`;
    const embedded = {
      texts: "quarry_embedder_texts_total",
      textsInBatches: "quarry_embedder_batch_size_sum",
      calls: "quarry_embedder_batch_size_count",
      timedCalls: "quarry_embedder_batch_duration_seconds_count",
      waits: "quarry_embedder_queue_wait_seconds_count",
    };
    const bm25Searches = `quarry_search_duration_seconds_count{mode="bm25",backend="sqlite"}`;
    const answers = (outcome: string) => `quarry_answers_total{outcome="${outcome}"}`;
    const citations = (verdict: string) => `quarry_answer_citations_total{verdict="${verdict}"}`;
    const answerTimes = ["quarry_answer_duration_seconds_count", "quarry_answer_first_token_seconds_count"];
    const before = new Map<string, number>();
    for (const q of [
      ...stages.map(handled),
      rpcs("UploadDocument"),
      rpcs("Search"),
      rpcs("Chat"),
      ...Object.values(embedded),
      bm25Searches,
      answers("answered"),
      answers("abstained"),
      citations("supported"),
      citations("unsupported"),
      ...answerTimes,
    ]) {
      before.set(q, await query(q));
    }
    const moved = async (promql: string) => (await query(promql)) - before.get(promql)!;

    const { knowledgeBase } = await client.createKnowledgeBase({ name: `metrics-${randomBytes(3).toString("hex")}` });
    const docs = [
      await upload(client, knowledgeBase!.id, "harbour.txt", new TextEncoder().encode("The harbour opens at six in the morning and closes at nine at night.")),
      await upload(client, knowledgeBase!.id, "ferry.txt", new TextEncoder().encode("The ferry to the island leaves every hour from the north pier.")),
    ];
    for await (const update of client.watchIngestion({ documentIds: docs.map((d) => d.document!.id) }, { signal: AbortSignal.timeout(120_000) })) {
      expect(update.status, update.error).not.toBe(DocumentStatus.FAILED);
    }
    // The uploads' chunks went through the model: every text in some batch, every call timed, and
    // each of the stage's embed calls (one per document, both fit one batch) waited once.
    await eventually(handled("embedder"), before.get(handled("embedder"))! + 2);
    const texts = await moved(embedded.texts);
    expect(texts).toBeGreaterThanOrEqual(2);
    expect(await moved(embedded.textsInBatches)).toBe(texts);
    const calls = await moved(embedded.calls);
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(await moved(embedded.timedCalls)).toBe(calls);
    expect(await moved(embedded.waits)).toBeGreaterThanOrEqual(2);

    await client.search({ query: "when does the harbour open", knowledgeBases: [knowledgeBase!.id], settings: { mode: RetrievalMode.BM25 } });
    await eventually(bm25Searches, before.get(bm25Searches)! + 1);
    const covered = await collectChat(client, { question: "When does the harbour open?", knowledgeBases: [knowledgeBase!.id] });
    const uncovered = await collectChat(client, { question: "How long should green tea steep?", knowledgeBases: [knowledgeBase!.id] });
    expect([covered.final.answered, uncovered.final.answered]).toEqual([true, false]);

    for (const stage of stages) await eventually(handled(stage), before.get(handled(stage))! + 2);
    await eventually(rpcs("UploadDocument"), before.get(rpcs("UploadDocument"))! + 2);
    await eventually(rpcs("Search"), before.get(rpcs("Search"))! + 1);
    await eventually(rpcs("Chat"), before.get(rpcs("Chat"))! + 2);
    // Each answer counted once, by its outcome and with its times; its citations by their verdicts.
    await eventually(answers("answered"), before.get(answers("answered"))! + 1);
    await eventually(answers("abstained"), before.get(answers("abstained"))! + 1);
    for (const q of answerTimes) expect(await moved(q), q).toBe(2);
    const unsupported = covered.final.unsupportedMarkers + uncovered.final.unsupportedMarkers;
    const resolved = covered.final.resolvedMarkers + uncovered.final.resolvedMarkers;
    expect(resolved).toBeGreaterThan(0);
    expect(await moved(citations("unsupported"))).toBe(unsupported);
    expect(await moved(citations("supported"))).toBe(resolved - unsupported);
    // Every event the uploads caused was consumed: no stage has anything pending.
    await eventually(`quarry_bus_pending_events{group=~"parser|chunker|embedder|index"}`, 0);
    expect(await query(`quarry_stage_events_total{outcome!="handled"}`)).toBe(0);
    // The process's own metrics come with it (prom-client's defaults).
    expect(await query("process_resident_memory_bytes")).toBeGreaterThan(0);
  }, 240_000);
});
