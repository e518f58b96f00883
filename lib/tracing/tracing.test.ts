// Tracing end to end inside one process, with the real SDK exporting OTLP/HTTP to a real HTTP
// listener here: an RPC's client and server spans form one trace through the traceparent header (one
// server span when the call stays in process), a bus message carries the trace to its consumer, a costly step is a child span, and log lines
// written inside a span name it. And with no endpoint configured, nothing is traced or sent.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { trace } from "@opentelemetry/api";
import { ParserService, file_quarry_parser_v1_parser } from "../../gen/quarry/parser/v1/parser_pb.ts";
import type { BusMessage } from "../bus/event-bus.ts";
import { SqliteEventBus } from "../bus/sqlite-event-bus.ts";
import { TracedEventBus } from "../bus/traced-event-bus.ts";
import { createLogger } from "../logger.ts";
import { buildServer, type RunningServer } from "../rpc/server.ts";
import { grpcTransport, inProcessTransport } from "../rpc/transports.ts";
import { ConfigError } from "../config.ts";
import { otlpTracesUrl, samplerFromEnv, startTracing } from "./sdk.ts";
import { activeSpanIds, activeTraceId, inSpan, spansKeptHere, tracingOn } from "./spans.ts";
import { spanAttribute as attribute, startOtlpReceiver, type OtlpReceiver } from "../testing/otlp-receiver.ts";

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  receiver.spans.length = 0;
  receiver.posts.length = 0;
});

/** A parser whose parse publishes its input on the bus inside a "parse" step, logging as it goes. */
async function tracedWorld() {
  const dir = mkdtempSync(path.join(tmpdir(), "quarry-tracing-"));
  const bus = new TracedEventBus(new SqliteEventBus(path.join(dir, "bus.db")), "sqlite");
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("parser", "info", { write: (line: string) => void lines.push(JSON.parse(line)) });
  const seenHeaders: (string | null)[] = [];
  const built = buildServer({
    serviceNames: [ParserService.typeName],
    files: [file_quarry_parser_v1_parser],
    logger,
    routes: (router) =>
      router.service(ParserService, {
        async parse(request, ctx) {
          seenHeaders.push(ctx.requestHeader.get("traceparent"));
          await inSpan("parse", { "quarry.bytes": request.content.length }, async () => {
            logger.info("parsing");
            await bus.publish("documents.parsed", [{ key: "doc-1", value: request.content }]);
          });
          return { document: { text: "ok", mimeType: "text/plain", parser: "echo" } };
        },
      }),
  });
  await bus.ensureTopics(["documents.parsed"]);
  const delivered = new Promise<{ message: BusMessage; ids: ReturnType<typeof activeSpanIds> }>((resolve) => {
    void bus.subscribe({ group: "chunker", topics: ["documents.parsed"], handler: async (message) => resolve({ message, ids: activeSpanIds() }) });
  });
  const server = await built.listen(0);
  cleanups.push(async () => {
    await server.close(100);
    await bus.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { built, server, lines, seenHeaders, delivered };
}

describe("tracing", () => {
  it("reads the standard OTLP variables, and is off without them", () => {
    expect(otlpTracesUrl({})).toBeUndefined();
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://jaeger:4318/" })).toBe("http://jaeger:4318/v1/traces");
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:4318/x" })).toBe("http://b:4318/x");
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_SDK_DISABLED: "true" })).toBeUndefined();
    expect(startTracing({}, "quarry")).toBeUndefined();
    expect(tracingOn()).toBe(false);
  });

  it("reads the standard sampler variables: every request by default, a ratio or none when set, a clear error for others", () => {
    expect(String(samplerFromEnv({}))).toMatch(/^ParentBased\{root=AlwaysOnSampler,/);
    expect(String(samplerFromEnv({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" }))).toMatch(/^ParentBased\{root=TraceIdRatioBased\{0.25\},/);
    expect(String(samplerFromEnv({ OTEL_TRACES_SAMPLER: "always_off" }))).toBe("AlwaysOffSampler");
    expect(String(samplerFromEnv({ OTEL_TRACES_SAMPLER: "traceidratio" }))).toBe("TraceIdRatioBased{1}");
    expect(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: "jaeger_remote" })).toThrow(ConfigError);
    expect(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1.5" })).toThrow(/from 0 to 1, not "1.5"/);
  });

  it("exports nothing and links no trace for a request the sampler leaves out", async () => {
    const tracing = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" }, "quarry-test");
    cleanups.push(() => tracing?.stop());
    const seen = await inSpan("caller", {}, async () => activeTraceId());
    await tracing!.stop();
    expect(seen).toBe("");
    expect(receiver.spans).toEqual([]);
  });

  it("below a request the sampler leaves out makes no spans, and still tells the callee and the bus it was left out", async () => {
    const tracing = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" }, "quarry-test");
    cleanups.push(() => tracing?.stop());
    const world = await tracedWorld();
    const made = vi.spyOn(trace.getTracer("quarry"), "startSpan");
    cleanups.push(() => made.mockRestore());
    const client = createClient(ParserService, grpcTransport(world.server.url));
    const { traceId, keptInside } = await inSpan("caller", {}, async () => {
      const keptInside = spansKeptHere();
      await client.parse({ fileName: "a.txt", content: new TextEncoder().encode("hello") });
      return { traceId: trace.getActiveSpan()!.spanContext().traceId, keptInside };
    });
    const { message, ids } = await world.delivered;
    await tracing!.stop();
    // The root's span (where the sampler decides) and the server's at the edge (it reads the
    // header's decision); no client span, no "parse" step, no producer or consumer span.
    expect(made.mock.calls.map(([name]) => name)).toEqual(["caller", "quarry.parser.v1.ParserService/Parse"]);
    expect(keptInside).toBe(false);
    expect(world.seenHeaders[0]).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    expect(message.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    expect(ids?.trace_id).toBe(traceId);
    expect(receiver.spans).toEqual([]);
  });

  it("without an endpoint sends no traceparent, logs no ids and exports nothing", async () => {
    const world = await tracedWorld();
    const client = createClient(ParserService, grpcTransport(world.server.url));
    await client.parse({ fileName: "a.txt", content: new TextEncoder().encode("hello") });
    const { message, ids } = await world.delivered;
    expect(world.seenHeaders).toEqual([null]);
    expect(message.headers.traceparent).toBeUndefined();
    expect(ids).toBeUndefined();
    expect(world.lines.find((l) => l.msg === "parsing")).not.toHaveProperty("trace_id");
    expect(receiver.posts).toEqual([]);
  });

  /**
   * Calls Parse inside a "caller" span through `transport`, with tracing on; what was exported, the
   * header the handler saw, the bus message and the ids active in its consumer.
   */
  async function tracedCall(transportOf: (world: Awaited<ReturnType<typeof tracedWorld>>) => ReturnType<typeof grpcTransport>) {
    const tracing = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }, "quarry-test");
    expect(tracing).toBeDefined();
    cleanups.push(() => tracing?.stop());
    const world = await tracedWorld();
    const client = createClient(ParserService, transportOf(world));
    await inSpan("caller", {}, () => client.parse({ fileName: "a.txt", content: new TextEncoder().encode("hello") }));
    const { message, ids } = await world.delivered;
    await tracing!.stop();
    expect(receiver.posts.every((p) => p === "/v1/traces")).toBe(true);
    const byName = (n: string) => {
      const found = receiver.spans.filter((s) => s.name === n);
      expect(found, `${n} among ${receiver.spans.map((s) => s.name).join(", ")}`).toHaveLength(1);
      return found[0];
    };
    const rpc = "quarry.parser.v1.ParserService/Parse";
    const rpcSpans = receiver.spans.filter((s) => s.name === rpc);
    const [caller, parse, send, processSpan] = ["caller", "parse", "send documents.parsed", "process documents.parsed"].map(byName);
    const serverSpan = rpcSpans.find((s) => s.kind === 2)!;
    expect(serverSpan, "the server's span").toBeDefined();
    const traceId = caller.traceId;
    for (const span of [...rpcSpans, parse, send, processSpan]) expect(span.traceId).toBe(traceId);
    expect(parse.parentSpanId).toBe(serverSpan.spanId);
    expect(send.parentSpanId).toBe(parse.spanId);
    expect(processSpan.parentSpanId).toBe(send.spanId);
    expect(attribute(processSpan, "messaging.consumer.group.name")).toBe("chunker");
    expect(attribute(processSpan, "messaging.system")).toBe("sqlite");
    expect(attribute(serverSpan, "rpc.method")).toBe("Parse");
    expect(message.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-${send.spanId}-01$`));
    expect(ids).toEqual({ trace_id: traceId, span_id: processSpan.spanId });
    expect(world.lines.find((l) => l.msg === "parsing")).toMatchObject({ trace_id: traceId, span_id: parse.spanId });
    expect(tracingOn()).toBe(false);
    return { caller, rpcSpans, serverSpan, seenHeaders: world.seenHeaders };
  }

  it("makes one trace of a call over gRPC (a client and a server span, joined by traceparent), the step inside it and the bus message it publishes", async () => {
    const { caller, rpcSpans, serverSpan, seenHeaders } = await tracedCall((world) => grpcTransport(world.server.url));
    const clientSpan = rpcSpans.find((s) => s.kind === 3)!;
    expect(rpcSpans).toHaveLength(2);
    expect(clientSpan.parentSpanId).toBe(caller.spanId);
    expect(serverSpan.parentSpanId).toBe(clientSpan.spanId);
    expect(seenHeaders[0]).toMatch(new RegExp(`^00-${caller.traceId}-${clientSpan.spanId}-01$`));
  });

  it("makes one span of a call in process, a child of the caller's, with no traceparent written or read", async () => {
    const { caller, rpcSpans, serverSpan, seenHeaders } = await tracedCall((world) => inProcessTransport(world.built.routes, world.built.interceptors));
    expect(rpcSpans).toEqual([serverSpan]);
    expect(serverSpan.parentSpanId).toBe(caller.spanId);
    expect(seenHeaders).toEqual([null]);
  });
});
