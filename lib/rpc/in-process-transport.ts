// A transport that calls a service's implementation in this process directly: the request message
// goes to the handler as it is, through the same server interceptors and handler context a server
// gives it, and the handler's answer comes back without being encoded. Connect's own in-memory
// transport (createRouterTransport) speaks the whole Connect protocol over in-memory HTTP instead:
// each call encodes and decodes both messages, frames them, and builds byte streams and abort
// controllers for both ends: a fifth of a Search RPC's main-thread time in embedded mode, where
// one search crosses three such hops (docs/benchmarks/query-threads.md).
//
// Messages are handed over, not copied: the handler gets the caller's message (or one made from
// the caller's init object) and the caller gets the handler's. Neither side changes a message once
// it is sent; no Quarry handler writes to its request.
//
// What stays the same as a served call: interceptors see a UnaryRequest with the method, header,
// context values and the call's signal; the handler's context follows the caller's signal and
// deadline; a failure reaches the caller as a ConnectError; a caller that gives up gets `canceled`
// at once without waiting for the handler. Streaming methods (Chat, WatchIngestion) go through
// Connect's in-memory transport as before: they are not per-search costs.
//
// invokeUnaryImplementation is exported by @connectrpc/connect/protocol for transports like this one
// but marked internal; @connectrpc/connect is pinned to an exact version in package.json.
import { create, type DescMessage, type DescMethod, type DescMethodUnary, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  createMethodImplSpec,
  createRouterTransport,
  createServiceImplSpec,
  type ConnectRouter,
  type ContextValues,
  type Interceptor,
  type MethodImplSpec,
  type Transport,
  type UnaryResponse,
} from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";

type Routes = (router: ConnectRouter) => void;

/** What a handler's signal says once its call has answered (work it left running may see it). */
const CALL_ENDED = new ConnectError("the call has ended", Code.Canceled);

/** Every unary method's implementation the routes register, by method. */
function unaryImplementations(routes: Routes): Map<DescMethod, MethodImplSpec> {
  const found = new Map<DescMethod, MethodImplSpec>();
  // Only service() and rpc() are called for registering; the routes' wrappers of router.handlers
  // (415 bodies, undecodable requests) concern bytes on a wire and find no handlers here.
  const collector = {
    handlers: [],
    service(service, implementation) {
      const spec = createServiceImplSpec(service, implementation);
      for (const method of Object.values(spec.methods)) if (method.kind === "unary" && method.method.localName in implementation) found.set(method.method, method);
      return collector;
    },
    rpc(method, implementation) {
      if (method.methodKind === "unary") found.set(method, createMethodImplSpec(method, implementation as never));
      return collector;
    },
  } as ConnectRouter;
  routes(collector);
  return found;
}

export function directInProcessTransport(routes: Routes, interceptors: Interceptor[]): Transport {
  const unary = unaryImplementations(routes);
  // Streams, and any unary method the routes do not implement (for Connect's own `unimplemented`).
  const framed = createRouterTransport(routes, { router: { interceptors } });
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeadersInit | undefined,
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const spec = unary.get(method);
      if (!spec) return framed.unary(method, signal, timeoutMs, header, input, contextValues);
      // The handler's values are its own, as a served call's are: the caller's stay the caller's.
      const context = createHandlerContext({
        service: method.parent,
        method,
        protocolName: "in-process",
        requestMethod: "POST",
        url: `https://in-memory/${method.parent.typeName}/${method.name}`,
        timeoutMs,
        requestSignal: signal,
        requestHeader: header,
        contextValues: createContextValues(),
      });
      try {
        const message = await untilAborted(
          invokeUnaryImplementation(spec as MethodImplSpec<I, O> & { kind: "unary" }, context, create(method.input, input), interceptors),
          context.signal,
        );
        return { stream: false, service: method.parent, method, header: context.responseHeader, trailer: context.responseTrailer, message };
      } catch (error) {
        throw asCallerError(error);
      } finally {
        // Ends the deadline's timer and unlinks the caller's signal, as a served call's end does;
        // with one reason made once, not the DOMException each abort() without one builds.
        context.abort(CALL_ENDED);
      }
    },
    stream: (method, signal, timeoutMs, header, input, contextValues) => framed.stream(method, signal, timeoutMs, header, input, contextValues),
  };
}

/** The call's result, or the signal's reason as soon as the caller cancels or the deadline passes. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(ConnectError.from(signal.reason, Code.Canceled));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => {}); // The handler still ends; what it ends with has no one to hear it.
      reject(ConnectError.from(signal.reason, Code.Canceled));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error as Error);
      },
    );
  });
}

/**
 * What a caller of a served method would receive: the handler's ConnectError, or for any other error
 * `internal error` with its message kept from the caller, as Connect's handlers keep it. No response
 * headers go into the error's metadata: Quarry sets none, and relayed metadata is what
 * error-mapping.ts strips before it can break a gRPC response.
 */
function asCallerError(error: unknown): ConnectError {
  return error instanceof ConnectError ? error : new ConnectError("internal error", Code.Internal, undefined, undefined, error);
}
