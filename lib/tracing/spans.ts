// The one seam between Quarry's code and tracing: spans are made through @opentelemetry/api, which
// is a no-op until the SDK is registered (lib/tracing/sdk.ts, started only when an OTLP endpoint is
// configured). `tracingOn()` lets hot paths skip even the no-op's small cost: no span objects, no
// header writes, no wrapped streams when nothing would be exported.
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
} from "@opentelemetry/api";

import { stepRecorder, type RecordedStep } from "./thread-steps.ts";

export { SpanKind, type Attributes, type Context, type Span };

let on = false;
let parentDecides = false;

/**
 * Set by the SDK's start and shutdown; nothing else switches tracing. `parentBased`: the sampler
 * follows the parent's decision (the default), so below a span it left out nothing would be kept.
 */
export function setTracingOn(value: boolean, parentBased = false): void {
  on = value;
  parentDecides = value && parentBased;
}

export function tracingOn(): boolean {
  return on;
}

/**
 * Whether a span made here could be exported: tracing is on and, under a parent-based sampler, the
 * active span (if any) was sampled. Below a request the sampler left out, steps, in-process calls
 * and bus messages then make no spans at all, so sampling cuts tracing's cost and not only its
 * exports (docs/benchmarks/observability.md); the trace context still travels, marked not sampled.
 */
export function spansKeptHere(): boolean {
  if (!on) return false;
  if (!parentDecides) return true;
  const active = trace.getActiveSpan();
  return active === undefined || (active.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
}

export const tracer = () => trace.getTracer("quarry");

/** Records a failure on a span: the exception event and an error status with its message. */
export function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/**
 * Runs `work` inside a child span of the active one (a costly step: parse, embed batch, BM25 list…),
 * ending it when the work settles and marking it failed when the work throws.
 */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!spansKeptHere()) {
    const steps = stepRecorder();
    if (!steps) return work(undefined);
    const startMs = Date.now();
    let failed: string | undefined;
    try {
      return await work(undefined);
    } catch (error) {
      failed = (error as Error).message;
      throw error;
    } finally {
      steps.push({ name, attributes, startMs, endMs: Date.now(), ...(failed === undefined ? {} : { failed }) });
    }
  }
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * A step's span for work that cannot be one callback (a model's streamed answer, consumed by a
 * generator that yields between deltas): started now, ended by the returned function, with the
 * error when the step failed.
 */
export function startStep(name: string, attributes: Attributes): (error?: unknown) => void {
  if (!spansKeptHere()) return () => {};
  const span = tracer().startSpan(name, { attributes });
  return (error) => {
    if (error !== undefined) failSpan(span, error);
    span.end();
  };
}

/** inSpan for synchronous work (fusion, a sort): the same span, without a promise. */
export function inSpanSync<T>(name: string, attributes: Attributes, work: () => T): T {
  if (!spansKeptHere()) {
    const steps = stepRecorder();
    if (!steps) return work();
    const startMs = Date.now();
    let failed: string | undefined;
    try {
      return work();
    } catch (error) {
      failed = (error as Error).message;
      throw error;
    } finally {
      steps.push({ name, attributes, startMs, endMs: Date.now(), ...(failed === undefined ? {} : { failed }) });
    }
  }
  return tracer().startActiveSpan(name, { attributes }, (span) => {
    try {
      return work();
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * The active span's trace id, or "" when there is no trace to look up: tracing off, outside any
 * span, or a request the sampler left out (its spans are never exported, so a link would find nothing).
 */
export function activeTraceId(): string {
  if (!on) return "";
  const span = trace.getActiveSpan()?.spanContext();
  return span && trace.isSpanContextValid(span) && (span.traceFlags & TraceFlags.SAMPLED) !== 0 ? span.traceId : "";
}

/** trace_id and span_id of the active span, for log lines; undefined when there is none. */
export function activeSpanIds(): { trace_id: string; span_id: string } | undefined {
  if (!on) return undefined;
  const span = trace.getActiveSpan()?.spanContext();
  if (!span || !trace.isSpanContextValid(span)) return undefined;
  return { trace_id: span.traceId, span_id: span.spanId };
}

/** Writes the active context (W3C traceparent, tracestate) into a carrier of string headers. */
export function injectContext(carrier: Record<string, string>, ctx: Context = context.active()): void {
  propagation.inject(ctx, carrier);
}

/** The context a carrier's traceparent describes (the root context when it has none). */
export function extractContext(get: (name: string) => string | undefined): Context {
  return propagation.extract(ROOT_CONTEXT, undefined, {
    keys: () => ["traceparent", "tracestate"],
    get: (_carrier, key) => get(key),
  });
}

/** Runs `work` in `ctx` (a caller's context from a header, kept for what `work` calls in turn). */
export function withContext<T>(ctx: Context, work: () => T): T {
  return context.with(ctx, work);
}

/** Runs `work` with `span` active, so spans and log lines made inside belong to it. */
export function withSpanActive<T>(span: Span, parent: Context, work: () => T): T {
  return context.with(trace.setSpan(parent, span), work);
}

/**
 * Iterates `source` with `ctx` active at every step: an async generator's body runs in the context
 * of whoever calls next(), so a streaming handler would otherwise lose its span after the first await.
 */
export async function* iterateInContext<T>(ctx: Context, source: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      const step = await context.with(ctx, () => iterator.next());
      if (step.done) return;
      yield step.value;
    }
  } finally {
    await context.with(ctx, async () => iterator.return?.());
  }
}

/**
 * Replays the steps a worker thread recorded (thread-steps.ts) as finished spans under the active
 * span; nothing when tracing is off. Nesting is not kept: the steps become siblings under the caller's
 * span (those that run there — a search's lists and its fusion — are siblings anyway).
 */
export function replaySteps(steps: readonly RecordedStep[] | undefined): void {
  if (!steps || !spansKeptHere()) return;
  for (const step of steps) {
    const span = tracer().startSpan(step.name, { attributes: step.attributes, startTime: step.startMs });
    if (step.failed !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: step.failed });
    span.end(step.endMs);
  }
}
