// Starts the OpenTelemetry SDK for a process when an OTLP endpoint is configured, and only then:
// without OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) nothing is
// registered, @opentelemetry/api stays a no-op and tracingOn() is false. Spans go out over OTLP/HTTP
// in batches. Only composition roots (app/) start it; the rest of the code sees lib/tracing/spans.ts.
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler } from "@opentelemetry/sdk-trace";
import { ConfigError, optional, type Env } from "../config.ts";
import { setTracingOn } from "./spans.ts";

export interface Tracing {
  /** Where spans go. */
  url: string;
  /** Exports what is buffered and, for the last user in the process, stops the SDK. */
  stop(): Promise<void>;
}

/**
 * The OTLP/HTTP traces URL the standard variables name: the traces endpoint as given, or the
 * general endpoint with /v1/traces appended (as the OTLP exporter specification says); undefined
 * when neither is set or OTEL_SDK_DISABLED is true.
 */
export function otlpTracesUrl(env: Env): string | undefined {
  if (optional(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  if (optional(env, "OTEL_TRACES_EXPORTER")?.toLowerCase() === "none") return undefined;
  const traces = optional(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (traces) return traces;
  const base = optional(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  return base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined;
}

const SAMPLERS = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"];

/**
 * The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, as the OpenTelemetry
 * specification defines them (default parentbased_always_on: every request traced). This SDK package
 * does not read them itself. A name it does not know is refused at start rather than ignored.
 */
export function samplerFromEnv(env: Env): Sampler {
  const name = (optional(env, "OTEL_TRACES_SAMPLER") ?? "parentbased_always_on").toLowerCase();
  if (!SAMPLERS.includes(name)) throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}, not "${name}"`);
  const ratio = () => {
    const given = optional(env, "OTEL_TRACES_SAMPLER_ARG");
    const value = given === undefined ? 1 : Number(given);
    if (!Number.isFinite(value) || value < 0 || value > 1) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, not "${given}"`);
    return new TraceIdRatioBasedSampler(value);
  };
  const root = name.endsWith("always_on") ? new AlwaysOnSampler() : name.endsWith("always_off") ? new AlwaysOffSampler() : ratio();
  return name.startsWith("parentbased_") ? new ParentBasedSampler({ root }) : root;
}

// One SDK per process: embedded Quarry and tests may start several instances in one process, and
// the global provider must outlive all but the last.
let running: { provider: TracerProvider; url: string; users: number } | undefined;

/** Starts tracing for `serviceName` (OTEL_SERVICE_NAME wins) when an endpoint is configured. */
export function startTracing(env: Env, serviceName: string): Tracing | undefined {
  const url = otlpTracesUrl(env);
  if (!url) return undefined;
  if (!running) {
    const sampler = samplerFromEnv(env);
    const provider = new TracerProvider({
      sampler,
      resource: resourceFromAttributes({ "service.name": optional(env, "OTEL_SERVICE_NAME") ?? serviceName }),
      spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) })],
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
    running = { provider, url, users: 0 };
    setTracingOn(true, sampler instanceof ParentBasedSampler);
  }
  const current = running;
  current.users++;
  let stopped = false;
  return {
    url: current.url,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (--current.users > 0) return void (await current.provider.forceFlush());
      if (running === current) {
        running = undefined;
        setTracingOn(false);
        trace.disable();
        propagation.disable();
        context.disable();
      }
      await current.provider.shutdown();
    },
  };
}
