import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { QuarryService } from "../gen/quarry/gateway/v1/gateway_pb.ts";

export type QuarryClient = Client<typeof QuarryService>;

/** A client of the gateway; with an API key (--api-key, else QUARRY_API_KEY) every call carries it. */
export function gatewayClient(url: string, apiKey = process.env.QUARRY_API_KEY?.trim()): QuarryClient {
  return createClient(
    QuarryService,
    createConnectTransport({
      baseUrl: url,
      httpVersion: "1.1",
      interceptors: apiKey
        ? [
            (next) => (request) => {
              request.header.set("authorization", `Bearer ${apiKey}`);
              return next(request);
            },
          ]
        : [],
    }),
  );
}
