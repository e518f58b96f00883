// Traces of distributed Quarry in the real Jaeger: six service processes on Kafka, OpenSearch and
// Tika export OTLP/HTTP to Jaeger (deploy/local/engines.sh up jaeger), and the test reads back
// through Jaeger's query API that an upload is one trace from the gateway through parser, chunker,
// embedder and index with the Kafka send/process spans between them, and a chat turn one trace
// through gateway, answer, embedder and index, with every span's parent in its trace. Each process
// reports under a service name of this run only, so other runs on the same Jaeger never mix in.
// Embeddings come from the OpenAI-compatible stub: the local model's CPU time would only slow it.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import type { ServiceName } from "../../lib/config.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { collectChat, upload, watchAll } from "../e2e/e2e-helpers.ts";
import { fixtureBytes } from "../fixtures/fixture-documents.ts";
import { SERVICE_NAMES, startDistributedQuarry, type DistributedQuarry } from "../support/distributed-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { describeWithAllEngines } from "./engines-all.ts";
import { waitFor } from "./wait-for.ts";

/** A span as Jaeger's query API (/api/traces) returns it. */
interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references?: { refType: string; traceID: string; spanID: string }[];
  processID: string;
  duration: number;
  tags?: { key: string; value: unknown }[];
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

const jaeger = {
  value: process.env.JAEGER_QUERY_URL?.trim() && process.env.JAEGER_OTLP_URL?.trim() ? process.env.JAEGER_QUERY_URL.trim() : undefined,
  requiredBy: "QUARRY_REQUIRE_ENGINES" as const,
  missing: "JAEGER_QUERY_URL and JAEGER_OTLP_URL are not set",
  hint: "Start Jaeger with deploy/local/engines.sh up jaeger (or QUARRY_ENGINES_WITH_JAEGER=1)",
};

const STAGES = [
  { service: "parser", topic: "documents.submitted" },
  { service: "chunker", topic: "documents.parsed" },
  { service: "embedder", topic: "chunks.created" },
  { service: "index", topic: "chunks.embedded" },
];

describeWithAllEngines("traces of distributed Quarry in Jaeger", (engines) =>
  describeWith(jaeger, "read back from Jaeger", (queryUrl) => {
    const run = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
    const serviceName = (name: ServiceName) => `quarry-${name}-${run}`;
    const started = Date.now();
    let stub: OpenAiStub;
    let quarry: DistributedQuarry;

    beforeAll(async () => {
      stub = await startOpenAiStub();
      quarry = await startDistributedQuarry({
        ...engines,
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: process.env.JAEGER_OTLP_URL!.trim(),
          QUARRY_EMBEDDING_PROVIDER: "openai",
          QUARRY_EMBEDDING_BASE_URL: stub.url,
          QUARRY_EMBEDDING_MODEL: "stub-hashing",
          QUARRY_EMBEDDING_DIMENSION: "384",
        },
        serviceEnv: Object.fromEntries(SERVICE_NAMES.map((name) => [name, { OTEL_SERVICE_NAME: serviceName(name) }])),
      });
    }, 240_000);

    afterAll(async () => {
      await quarry?.stop();
      await stub?.close();
    }, 60_000);

    /** This run's traces that hold a span of `operation` in the gateway, as Jaeger has them now. */
    const tracesOf = async (operation: string): Promise<JaegerTrace[]> => {
      const params = new URLSearchParams({ service: serviceName("gateway"), operation, limit: "100", start: String(started * 1000), end: String((Date.now() + 60_000) * 1000) });
      const res = await fetch(`${queryUrl}/api/traces?${params}`);
      // Jaeger answers 404 "trace not found"-style errors for a service it has not seen yet.
      if (!res.ok) return [];
      return ((await res.json()) as { data: JaegerTrace[] | null }).data ?? [];
    };
    const serviceOf = (trace: JaegerTrace, span: JaegerSpan) => trace.processes[span.processID]?.serviceName ?? "";
    const tag = (span: JaegerSpan, key: string) => span.tags?.find((t) => t.key === key)?.value;
    const orphans = (trace: JaegerTrace) => {
      const ids = new Set(trace.spans.map((s) => s.spanID));
      return trace.spans.filter((s) => (s.references ?? []).some((r) => r.refType === "CHILD_OF" && !ids.has(r.spanID)));
    };
    const roots = (trace: JaegerTrace) => trace.spans.filter((s) => (s.references ?? []).length === 0);
    /** Client spans whose server side has not reached Jaeger yet: each process exports in its own batches, so a trace can hold a call before the callee's spans. */
    const unanswered = (trace: JaegerTrace) => {
      const served = new Set(trace.spans.filter((s) => tag(s, "span.kind") === "server").flatMap((s) => (s.references ?? []).map((r) => r.spanID)));
      return trace.spans.filter((s) => tag(s, "span.kind") === "client" && !served.has(s.spanID));
    };
    const describeTrace = (trace: JaegerTrace) =>
      trace.spans
        .map((s) => `${serviceOf(trace, s).replace(`-${run}`, "")}: ${s.operationName} (${(s.duration / 1000).toFixed(1)} ms)`)
        .sort()
        .join("\n");

    /** Every stage consumed its topic in this trace (the trace has reached the index), with nothing missing in between. */
    const uploadComplete = (trace: JaegerTrace) =>
      STAGES.every(({ service, topic }) =>
        trace.spans.some((s) => serviceOf(trace, s) === serviceName(service as ServiceName) && s.operationName.startsWith("process ") && s.operationName.endsWith(topic)),
      ) &&
      orphans(trace).length === 0 &&
      unanswered(trace).length === 0;

    it("makes one trace of each upload: gateway, parser, chunker, embedder and index, the Kafka hops between them, every span's parent present", async () => {
      const kb = (await quarry.client.createKnowledgeBase({ name: `traced-${run}` })).knowledgeBase!.id;
      const uploads = [
        await upload(quarry.client, kb, "harbour.md", new TextEncoder().encode("# Harbour\n\nThe harbour opens at six in the morning and closes at nine at night.\n")),
        await upload(quarry.client, kb, "canal-boating.docx", await fixtureBytes("canal-boating.docx")),
      ];
      const ids = uploads.map((u) => u.document!.id);
      const log = await watchAll(quarry.client, ids, 180_000);
      for (const id of ids) expect(log.get(id)!.at(-1)?.status, log.get(id)!.at(-1)?.error).toBe(DocumentStatus.READY);

      // The processes export in batches: wait until Jaeger holds both traces whole.
      const traces = await waitFor(
        "two complete upload traces in Jaeger",
        async () => {
          const found = await tracesOf("quarry.gateway.v1.QuarryService/UploadDocument");
          return found.length === 2 && found.every(uploadComplete) ? found : undefined;
        },
        120_000,
      ).catch(async (error: Error) => {
        const found = await tracesOf("quarry.gateway.v1.QuarryService/UploadDocument");
        throw new Error(`${error.message}; Jaeger has ${found.length}:\n${found.map(describeTrace).join("\n---\n")}`);
      });

      const documentsTraced = new Set<unknown>();
      for (const trace of traces) {
        const services = new Set(trace.spans.map((s) => serviceOf(trace, s)));
        for (const name of ["gateway", "parser", "chunker", "embedder", "index"] as ServiceName[]) expect(services, describeTrace(trace)).toContain(serviceName(name));
        // One root, the gateway's call; everything else hangs from a span of the same trace.
        expect(roots(trace).map((s) => `${serviceOf(trace, s)} ${s.operationName}`)).toEqual([`${serviceName("gateway")} quarry.gateway.v1.QuarryService/UploadDocument`]);
        expect(orphans(trace).map((s) => s.operationName)).toEqual([]);
        // Each hop: a send span in the producing service, the process span in the consuming stage as its child.
        const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
        for (const { service, topic } of STAGES) {
          const processed = trace.spans.filter((s) => serviceOf(trace, s) === serviceName(service as ServiceName) && s.operationName.startsWith("process ") && s.operationName.endsWith(topic));
          expect(processed.length, `${service} processing ${topic}`).toBeGreaterThan(0);
          for (const span of processed) {
            const parent = byId.get(span.references![0]!.spanID)!;
            expect(parent.operationName, `the parent of ${service}'s ${span.operationName}`).toMatch(new RegExp(`^send .*${topic.replace(".", "\\.")}$`));
            expect(tag(parent, "span.kind")).toBe("producer");
            expect(tag(span, "span.kind")).toBe("consumer");
            documentsTraced.add(tag(span, "quarry.document_id"));
          }
        }
        const names = new Set(trace.spans.map((s) => s.operationName));
        for (const step of ["parse", "split", "embed batch", "engine write"]) expect(names, describeTrace(trace)).toContain(step);
      }
      // One trace per upload: each document's stages in its own trace.
      expect([...documentsTraced].sort()).toEqual([...ids].sort());
      console.info(`an upload's trace in Jaeger (${serviceName("gateway")}):\n${describeTrace(traces[0]!)}`);
    }, 360_000);

    it("makes one trace of a chat turn through gateway, answer, embedder and index", async () => {
      const kb = `traced-${run}`;
      const chat = await collectChat(quarry.client, { question: "When does the harbour open?", knowledgeBases: [kb] });
      expect(chat.final.answered).toBe(true);
      const wanted = ["gateway", "answer", "embedder", "index"] as ServiceName[];
      const [trace] = await waitFor(
        "the chat turn's trace in Jaeger",
        async () => {
          const found = await tracesOf("quarry.gateway.v1.QuarryService/Chat");
          const whole = found.filter(
            (t) => wanted.every((name) => t.spans.some((s) => serviceOf(t, s) === serviceName(name))) && orphans(t).length === 0 && unanswered(t).length === 0,
          );
          return found.length === 1 && whole.length === 1 ? whole : undefined;
        },
        120_000,
      );
      expect(roots(trace!).map((s) => s.operationName)).toEqual(["quarry.gateway.v1.QuarryService/Chat"]);
      const servers = new Set(trace!.spans.filter((s) => tag(s, "span.kind") === "server").map((s) => `${serviceOf(trace!, s)} ${tag(s, "rpc.service")}`));
      for (const [name, rpc] of [
        ["answer", "quarry.answer.v1.AnswerService"],
        ["embedder", "quarry.embedder.v1.EmbedderService"],
        ["index", "quarry.index.v1.IndexService"],
      ] as const) {
        expect(servers, describeTrace(trace!)).toContain(`${serviceName(name)} ${rpc}`);
      }
      const names = new Set(trace!.spans.map((s) => s.operationName));
      expect(names, describeTrace(trace!)).toContain("fusion");
      console.info(`the chat turn's trace in Jaeger:\n${describeTrace(trace!)}`);
    }, 240_000);
  }),
);
