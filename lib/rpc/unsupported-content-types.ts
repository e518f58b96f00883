// connect-es answers a request whose Content-Type the method does not take with a bare 415 and an
// empty body: a person who POSTs plain JSON to a streaming method (Chat, WatchIngestion) learns
// nothing. This wraps each method's handler and gives that 415 a JSON body saying what the method
// takes, and where the server has one, what to use instead (`hint`).
import type { ConnectRouter } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";

export function explainUnsupportedContentTypes(router: ConnectRouter, hint: (method: UniversalHandler["method"]) => string = () => ""): void {
  router.handlers.forEach((handler, i) => {
    router.handlers[i] = Object.assign(wrap(handler, hint(handler.method)), handler);
  });
}

function wrap(handler: UniversalHandler, hint: string): (req: UniversalServerRequest) => Promise<UniversalServerResponse> {
  const unary = handler.method.methodKind === "unary";
  const takes = unary
    ? "application/json or application/proto (Connect), application/grpc, application/grpc-web"
    : "application/connect+json or application/connect+proto with enveloped messages (a Connect client sends them), application/grpc, application/grpc-web";
  return async (req) => {
    const res = await handler(req);
    if (res.status !== 415) return res;
    const given = req.header.get("content-type") || "no Content-Type";
    const what = unary ? "takes" : "is a streaming method: it takes";
    const message = `${handler.method.parent.typeName}/${handler.method.name} ${what} ${takes}; this request sent ${given}.${hint ? ` ${hint}` : ""}`;
    const body = Buffer.from(JSON.stringify({ code: "invalid_argument", message }));
    const header = new Headers(res.header);
    header.set("content-type", "application/json");
    header.set("content-length", String(body.byteLength));
    return {
      ...res,
      header,
      body: (async function* () {
        yield body;
      })(),
    };
  };
}
