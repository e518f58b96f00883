import { ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { QuarryService } from "../gen/quarry/gateway/v1/gateway_pb.ts";

export type QuarryClient = Client<typeof QuarryService>;

/** The gateway could not be talked to at all: no request reached Quarry. The message says what to do. */
export class GatewayUnreachableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "GatewayUnreachableError";
  }
}

/** A client of the gateway; with an API key (--api-key, else QUARRY_API_KEY) every call carries it. */
export function gatewayClient(url: string, apiKey = process.env.QUARRY_API_KEY?.trim()): QuarryClient {
  const interceptors: Interceptor[] = [explainUnreachable(url)];
  if (apiKey) {
    interceptors.push((next) => (request) => {
      request.header.set("authorization", `Bearer ${apiKey}`);
      return next(request);
    });
  }
  return createClient(QuarryService, createConnectTransport({ baseUrl: url, httpVersion: "1.1", interceptors }));
}

/**
 * A socket-level failure reaches the caller as a ConnectError wrapping Node's system error; the
 * system error's code (not its text) says which of a person's usual mistakes it was.
 */
function explainUnreachable(url: string): Interceptor {
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      throw unreachable(url, error) ?? error;
    }
  };
}

export function unreachable(url: string, error: unknown): GatewayUnreachableError | undefined {
  const code = systemErrorCode(error);
  if (!code) return undefined;
  const where = new URL(url);
  switch (code) {
    case "ECONNREFUSED":
      return new GatewayUnreachableError(
        `no Quarry gateway is listening at ${url}: start one with \`npm start\` (or \`quarry serve\`), or point --url (or QUARRY_URL) at a running one`,
        { cause: error },
      );
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new GatewayUnreachableError(`the host ${where.hostname} in ${url} cannot be resolved; check --url (or QUARRY_URL)`, { cause: error });
    case "EHOSTUNREACH":
    case "ENETUNREACH":
    case "ETIMEDOUT":
      return new GatewayUnreachableError(`${url} cannot be reached (${code}); check --url (or QUARRY_URL) and the network`, { cause: error });
    case "EPROTO":
    case "ERR_SSL_WRONG_VERSION_NUMBER":
      // What OpenSSL reports when the other end answers a TLS hello in plain HTTP.
      if (where.protocol === "https:") {
        return new GatewayUnreachableError(
          `${url} does not speak HTTPS; Quarry's gateway serves plain HTTP unless a TLS proxy stands in front of it: try --url http://${where.host}`,
          { cause: error },
        );
      }
      return undefined;
    default:
      return undefined;
  }
}

/** The `code` of the Node system error at the root of a ConnectError (e.g. ECONNREFUSED), if any. */
function systemErrorCode(error: unknown): string | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    if (at instanceof ConnectError) continue;
    const code = (at as NodeJS.ErrnoException).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}
