import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { QuarryService } from "../gen/quarry/gateway/v1/gateway_pb.ts";

export type QuarryClient = Client<typeof QuarryService>;

export function gatewayClient(url: string): QuarryClient {
  return createClient(QuarryService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
}
