// A request body that is not a valid protobuf message is the caller's mistake, but connect-es
// reports it as `internal` ("parse binary: premature EOF", HTTP 500): it uses one serialization
// for requests and responses, and a response that does not decode is indeed internal. This wraps
// each method's handler and turns exactly that failure into `invalid_argument`, naming the message
// type, for the Connect protocol (unary: HTTP 400 with the JSON error) and gRPC (the trailer
// status). gRPC-Web carries its trailer inside the body and keeps connect-es's code.
import type { ConnectRouter } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";

const PARSE_BINARY = "parse binary: ";
const GRPC_INTERNAL = "13";
const GRPC_INVALID_ARGUMENT = "3";

export function reportUndecodableRequestsAsInvalid(router: ConnectRouter): void {
  router.handlers.forEach((handler, i) => {
    router.handlers[i] = Object.assign(wrap(handler), handler);
  });
}

function wrap(handler: UniversalHandler): (req: UniversalServerRequest) => Promise<UniversalServerResponse> {
  const typeName = handler.method.input.typeName;
  const reason = (detail: string) => `the request is not a valid ${typeName} message (${detail})`;
  return async (req) => {
    const res = await handler(req);
    if (res.trailer) return fixGrpcTrailer(res, res.trailer, reason);
    if (res.status === 500 && res.body) return fixConnectUnary(res, res.body, reason);
    return res;
  };
}

async function fixConnectUnary(res: UniversalServerResponse, body: AsyncIterable<Uint8Array>, reason: (detail: string) => string): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  let error: { code?: string; message?: string } | undefined;
  try {
    error = JSON.parse(bytes.toString("utf8"));
  } catch {
    // Not a JSON error body (a compressed one, say): pass it on untouched.
  }
  if (error?.code !== "internal" || !error.message?.startsWith(PARSE_BINARY)) return { ...res, body: once(bytes) };
  const fixed = Buffer.from(JSON.stringify({ code: "invalid_argument", message: reason(error.message.slice(PARSE_BINARY.length)) }));
  const header = new Headers(res.header);
  header.set("content-length", String(fixed.byteLength));
  return { ...res, status: 400, header, body: once(fixed) };
}

/** The trailer is filled when the body ends, which for a request that fails to decode is before the handler returns. */
function fixGrpcTrailer(res: UniversalServerResponse, trailer: Headers, reason: (detail: string) => string): UniversalServerResponse {
  const fix = () => {
    const message = decodeURIComponent(trailer.get("grpc-message") ?? "");
    if (trailer.get("grpc-status") !== GRPC_INTERNAL || !message.startsWith(PARSE_BINARY)) return;
    trailer.set("grpc-status", GRPC_INVALID_ARGUMENT);
    trailer.set("grpc-message", encodeURIComponent(reason(message.slice(PARSE_BINARY.length))));
  };
  fix();
  const body = res.body;
  if (!body) return res;
  return {
    ...res,
    body: (async function* () {
      yield* body;
      fix();
    })(),
  };
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
