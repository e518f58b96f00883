import { Code, ConnectError, type Interceptor, type StreamResponse, type UnaryResponse } from "@connectrpc/connect";
import type { Logger } from "../logger.ts";
import { toConnectError } from "./error-mapping.ts";

/**
 * Maps domain errors to Connect codes, for unary handlers and for errors thrown while a response
 * stream is being produced, and logs each call's method, code and duration (never its payload).
 */
export function rpcEdgeInterceptor(logger: Logger): Interceptor {
  return (next) => async (request) => {
    const started = performance.now();
    const method = `${request.service.typeName}/${request.method.name}`;
    const done = (error?: unknown) => {
      const ms = Math.round(performance.now() - started);
      if (!error) return logger.debug({ method, code: "ok", ms }, "rpc");
      const mapped = toConnectError(error);
      // An internal error needs its stack; a caller's mistake (not found, invalid input) only its reason.
      if (mapped.code === Code.Internal) logger.error({ method, code: mapped.code, ms, err: mapped.cause ?? mapped }, "rpc failed");
      // A caller that went away is not a failure: thousands of reset streams must not flood the log.
      else if (mapped.code === Code.Canceled) logger.debug({ method, code: Code[mapped.code], ms }, "rpc cancelled");
      else logger.info({ method, code: Code[mapped.code], ms, reason: mapped.rawMessage }, "rpc failed");
      return mapped;
    };
    try {
      return whenAnswered(await next(request), done);
    } catch (error) {
      throw done(error) ?? (error instanceof ConnectError ? error : toConnectError(error));
    }
  };
}

/**
 * Calls `done` once the response is complete: at once for a unary one, after a stream's last
 * message (or with the error that ended it, which `done` may replace) for a streamed one.
 */
export function whenAnswered<R extends UnaryResponse | StreamResponse>(response: R, done: (error?: unknown) => unknown): R {
  if (!response.stream) {
    done();
    return response;
  }
  const source = response.message;
  return {
    ...response,
    message: (async function* () {
      try {
        yield* source;
      } catch (error) {
        throw done(error) ?? error;
      }
      done();
    })(),
  };
}
