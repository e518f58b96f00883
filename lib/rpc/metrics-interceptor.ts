import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import type { Metrics } from "../metrics/metrics.ts";
import { toConnectError } from "./error-mapping.ts";
import { whenAnswered } from "./interceptors.ts";
import { activeTraceId } from "../tracing/spans.ts";

/**
 * Records each call a server answers: service, method, Connect code and duration (a stream's until
 * its last message). Server side only, so a call between two services counts once, at its callee.
 */
export function rpcMetricsInterceptor(metrics: Metrics): Interceptor {
  return (next) => async (request) => {
    const started = performance.now();
    // Read now: the server's span is active here, not where a stream ends.
    const traceId = activeTraceId();
    const record = (error?: unknown) => {
      const code = error === undefined ? "ok" : codeToString((error instanceof ConnectError ? error : toConnectError(error)).code);
      metrics.rpc(request.service.typeName, request.method.name, code, (performance.now() - started) / 1000, traceId || undefined);
    };
    try {
      return whenAnswered(await next(request), (error) => record(error));
    } catch (error) {
      record(error);
      throw error;
    }
  };
}
