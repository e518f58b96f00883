// A span for every RPC. A call that crosses a process has one on both ends: the client's span
// carries the W3C traceparent in the request headers, and the server's span continues that trace,
// so one request is one trace across services. A call through an in-memory transport (embedded
// mode) never leaves the process: it gets one server span, a child of the caller's active span,
// with no header written or parsed (docs/benchmarks/observability.md measured what the pair cost).
// All pass calls through untouched when tracing is off.
import { ConnectError, type Interceptor, type StreamResponse, type UnaryResponse } from "@connectrpc/connect";
import { context } from "@opentelemetry/api";
import {
  extractContext,
  failSpan,
  injectContext,
  iterateInContext,
  SpanKind,
  spansKeptHere,
  tracer,
  tracingOn,
  withSpanActive,
  type Context,
  type Span,
} from "../tracing/spans.ts";
import { toConnectError } from "./error-mapping.ts";

type AnyResponse = UnaryResponse | StreamResponse;

function attributes(request: { service: { typeName: string }; method: { name: string } }) {
  return { "rpc.system": "connect_rpc", "rpc.service": request.service.typeName, "rpc.method": request.method.name };
}

/**
 * Makes the call with `span` active and ends the span with it: at once for a unary response, when
 * the stream ends for a streamed one (whose steps run in the span's context too).
 */
function callInSpan(span: Span, parent: Context, call: () => Promise<AnyResponse>): Promise<AnyResponse> {
  return withSpanActive(span, parent, async () => {
    let response: AnyResponse;
    try {
      response = await call();
    } catch (error) {
      failed(span, error);
      span.end();
      throw error;
    }
    if (!response.stream) {
      span.end();
      return response;
    }
    const ctx = context.active();
    const source = response.message;
    async function* traced() {
      try {
        yield* iterateInContext(ctx, source);
      } catch (error) {
        failed(span, error);
        throw error;
      } finally {
        span.end();
      }
    }
    return { ...response, message: traced() };
  });
}

function failed(span: Span, error: unknown): void {
  const mapped = error instanceof ConnectError ? error : toConnectError(error);
  span.setAttribute("rpc.connect_rpc.error_code", mapped.code);
  failSpan(span, mapped);
}

/** The server's span, a child of the caller's traceparent when the request carries one. */
export function tracingServerInterceptor(): Interceptor {
  return (next) => async (request) => {
    if (!tracingOn()) return next(request);
    const parent = extractContext((name) => request.header.get(name) ?? undefined);
    const span = tracer().startSpan(`${request.service.typeName}/${request.method.name}`, {
      kind: SpanKind.SERVER,
      attributes: attributes(request),
    }, parent);
    return callInSpan(span, parent, () => next(request));
  };
}

/**
 * The one span of a call that stays in this process: kind server (it is where the callee's work
 * hangs), parented by the caller's active context, which the in-memory transport carries along
 * with the call itself.
 */
export function tracingInProcessInterceptor(): Interceptor {
  return (next) => async (request) => {
    if (!spansKeptHere()) return next(request);
    const parent = context.active();
    const span = tracer().startSpan(`${request.service.typeName}/${request.method.name}`, { kind: SpanKind.SERVER, attributes: attributes(request) }, parent);
    return callInSpan(span, parent, () => next(request));
  };
}

/** The caller's span; its context goes out as the request's traceparent header. */
export function tracingClientInterceptor(): Interceptor {
  return (next) => async (request) => {
    if (!tracingOn()) return next(request);
    if (!spansKeptHere()) {
      // No span below a request the sampler left out, but the callee still learns it was left out.
      setTraceHeaders(request);
      return next(request);
    }
    const parent = context.active();
    const span = tracer().startSpan(`${request.service.typeName}/${request.method.name}`, { kind: SpanKind.CLIENT, attributes: attributes(request) }, parent);
    return callInSpan(span, parent, () => {
      setTraceHeaders(request);
      return next(request);
    });
  };
}

/** Writes the active context into the request's headers (traceparent, tracestate). */
function setTraceHeaders(request: { header: Headers }): void {
  const carrier: Record<string, string> = {};
  injectContext(carrier);
  for (const [name, value] of Object.entries(carrier)) request.header.set(name, value);
}
