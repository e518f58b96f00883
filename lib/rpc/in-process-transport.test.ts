// The direct in-process transport answers as a served call would: the same messages, the same
// interceptors, the same error codes, cancellation and deadlines, and streams as before. Each case
// runs against Connect's own in-memory transport too, so a difference between the two fails here.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createContextKey, createRouterTransport, type ConnectRouter, type Interceptor, type Transport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { QuarryService, SearchResponseSchema } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { directInProcessTransport } from "./in-process-transport.ts";

const SEEN = createContextKey<string>("", { description: "what the interceptor saw" });

interface Calls {
  handlerSignals: AbortSignal[];
  interceptorSaw: string[];
  handlerValues: string[];
}

function setUp(): { calls: Calls; routes: (router: ConnectRouter) => void; interceptors: Interceptor[] } {
  const calls: Calls = { handlerSignals: [], interceptorSaw: [], handlerValues: [] };
  const routes = (router: ConnectRouter) =>
    router.service(QuarryService, {
      async search(request, context) {
        calls.handlerSignals.push(context.signal);
        calls.handlerValues.push(context.values.get(SEEN));
        if (request.query === "fail plainly") throw new Error("disk on fire");
        if (request.query === "not found") throw new ConnectError("no such base", Code.NotFound);
        if (request.query === "wait") {
          await new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve()));
        }
        return { hits: [{ chunk: { id: `hit for ${request.query}`, text: request.knowledgeBases.join(",") }, score: 0.5 }] };
      },
      async *watchIngestion(request) {
        for (const id of request.documentIds) yield { documentId: id };
      },
    });
  const interceptors: Interceptor[] = [
    (next) => async (request) => {
      calls.interceptorSaw.push(`${request.method.name} ${request.header.get("x-who") ?? "-"} ${request.url}`);
      request.contextValues.set(SEEN, "set by the interceptor");
      return next(request);
    },
  ];
  return { calls, routes, interceptors };
}

const transports: Record<string, (routes: (router: ConnectRouter) => void, interceptors: Interceptor[]) => Transport> = {
  direct: (routes, interceptors) => directInProcessTransport(routes, interceptors),
  "Connect's in-memory": (routes, interceptors) => createRouterTransport(routes, { router: { interceptors } }),
};

describe.each(Object.keys(transports))("an in-process call (%s transport)", (name) => {
  const make = transports[name];

  it("reaches the handler through the interceptors and answers with a complete message", async () => {
    const { calls, routes, interceptors } = setUp();
    const client = createClient(QuarryService, make(routes, interceptors));
    const res = await client.search({ query: "tea", knowledgeBases: ["a", "b"] }, { headers: { "x-who": "ann" } });
    expect(res.$typeName).toBe(SearchResponseSchema.typeName);
    expect(res.hits[0].chunk?.id).toBe("hit for tea");
    expect(res.hits[0].chunk?.text).toBe("a,b");
    expect(res.hits[0].chunk?.documentId).toBe(""); // defaults filled in, as a decoded message has them
    expect(calls.interceptorSaw).toEqual([`Search ann https://in-memory/quarry.gateway.v1.QuarryService/Search`]);
    expect(calls.handlerValues).toEqual(["set by the interceptor"]);
  });

  it("gives the caller a ConnectError with the handler's code, and internal for a plain error", async () => {
    const { routes, interceptors } = setUp();
    const client = createClient(QuarryService, make(routes, interceptors));
    const notFound = await client.search({ query: "not found" }).catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(ConnectError);
    expect((notFound as ConnectError).code).toBe(Code.NotFound);
    expect((notFound as ConnectError).rawMessage).toBe("no such base");
    const plain = await client.search({ query: "fail plainly" }).catch((e: unknown) => e);
    expect((plain as ConnectError).code).toBe(Code.Internal);
    expect((plain as ConnectError).rawMessage).toBe("internal error");
  });

  it("answers canceled as soon as the caller gives up, and the handler's signal fires", async () => {
    const { calls, routes, interceptors } = setUp();
    const client = createClient(QuarryService, make(routes, interceptors));
    const controller = new AbortController();
    const pending = client.search({ query: "wait" }, { signal: controller.signal }).catch((e: unknown) => e);
    await until(() => calls.handlerSignals.length === 1);
    controller.abort();
    expect(((await pending) as ConnectError).code).toBe(Code.Canceled);
    await until(() => calls.handlerSignals[0].aborted);
  });

  it("answers deadline_exceeded when the caller's timeout passes first", async () => {
    const { routes, interceptors } = setUp();
    const client = createClient(QuarryService, make(routes, interceptors));
    const error = await client.search({ query: "wait" }, { timeoutMs: 30 }).catch((e: unknown) => e);
    expect((error as ConnectError).code).toBe(Code.DeadlineExceeded);
  });

  it("ends the handler's signal once the call has answered", async () => {
    const { calls, routes, interceptors } = setUp();
    const client = createClient(QuarryService, make(routes, interceptors));
    await client.search({ query: "tea" });
    await until(() => calls.handlerSignals[0].aborted);
  });

  it("streams a server-streaming method's messages, and names a method nobody implemented", async () => {
    const { routes, interceptors } = setUp();
    const client = createClient(QuarryService, make(routes, interceptors));
    const ids: string[] = [];
    for await (const res of client.watchIngestion({ documentIds: ["d1", "d2"] })) ids.push(res.documentId);
    expect(ids).toEqual(["d1", "d2"]);
    const missing = await client.getCaller({}).catch((e: unknown) => e);
    expect((missing as ConnectError).code).toBe(Code.Unimplemented);
  });
});

describe("the direct transport", () => {
  it("hands the handler a message made from the caller's init, not the caller's object", async () => {
    const seen: unknown[] = [];
    const transport = directInProcessTransport(
      (router) =>
        router.service(QuarryService, {
          search(request) {
            seen.push(request);
            return create(SearchResponseSchema);
          },
        }),
      [],
    );
    const init = { query: "tea" };
    await createClient(QuarryService, transport).search(init);
    expect(seen[0]).not.toBe(init);
    expect((seen[0] as { $typeName: string }).$typeName).toBe("quarry.gateway.v1.SearchRequest");
  });
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}
