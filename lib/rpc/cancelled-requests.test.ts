// A caller that went away is answered Canceled, whichever way its abort surfaced: as Quarry's
// CancelledError, as piscina's AbortError (a read thread's queued task dropped) or as the
// DOMException of an aborted signal; and the RPC edge does not log it as a failure.
import { fileURLToPath } from "node:url";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { Piscina } from "piscina";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Health } from "../../gen/grpc/health/v1/health_pb.ts";
import { CancelledError, throwIfCancelled } from "../errors.ts";
import { toConnectError, toDomainError } from "./error-mapping.ts";
import { rpcEdgeInterceptor } from "./interceptors.ts";

/** The error piscina rejects a task with when its signal has fired (the class is not exported). */
async function piscinaAbortError(): Promise<unknown> {
  const pool = new Piscina({ filename: fileURLToPath(new URL("../../services/index/sqlite/read-thread-entry.mjs", import.meta.url)), minThreads: 0, maxThreads: 1 });
  try {
    return await pool.run({}, { signal: AbortSignal.abort() }).then(() => undefined, (error: unknown) => error);
  } finally {
    await pool.destroy();
  }
}

describe("cancelled requests", () => {
  it("maps piscina's AbortError, an aborted signal's DOMException and CancelledError to Code.Canceled", async () => {
    const fromPool = await piscinaAbortError();
    expect((fromPool as Error).name).toBe("AbortError");
    expect(toConnectError(fromPool).code).toBe(Code.Canceled);
    expect(toConnectError(AbortSignal.abort().reason).code).toBe(Code.Canceled);
    expect(toConnectError(new CancelledError("search: the caller cancelled the request")).code).toBe(Code.Canceled);
    // And back: a peer's Canceled is a CancelledError to the domain, not a failure worth a retry.
    expect(toDomainError(new ConnectError("gone", Code.Canceled))).toBeInstanceOf(CancelledError);
  });

  it("throwIfCancelled throws only once the signal has fired", () => {
    const controller = new AbortController();
    expect(() => throwIfCancelled(controller.signal, "search")).not.toThrow();
    expect(() => throwIfCancelled(undefined, "search")).not.toThrow();
    controller.abort();
    expect(() => throwIfCancelled(controller.signal, "search")).toThrow(CancelledError);
  });

  it("answers Canceled at the RPC edge and logs it below info, not as a failed call", async () => {
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const transport = createRouterTransport(
      ({ service }) =>
        service(Health, {
          check: () => {
            throw new CancelledError("search: the caller cancelled the request");
          },
          watch: async function* () {},
        }),
      { router: { interceptors: [rpcEdgeInterceptor(logger)] } },
    );
    const error = await createClient(Health, transport).check({}).then(() => undefined, (e: unknown) => e);
    expect(ConnectError.from(error).code).toBe(Code.Canceled);
    expect(lines.map((l) => l.msg)).toEqual(["rpc cancelled"]);
    expect(lines[0].level).toBeLessThan(30);
  });
});
