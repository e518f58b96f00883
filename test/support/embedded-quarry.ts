// A whole Quarry in this test process: startEmbedded on a free port with a fresh data folder, and
// clients for it over each protocol the gateway serves. The environment is built from scratch so a
// developer's OPENSEARCH_URL, TIKA_URL or OPENAI_BASE_URL cannot turn an embedded test into
// something else; a test that wants one of them passes it in `env`.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { startEmbedded } from "../../app/embedded.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import type { Env } from "../../lib/config.ts";
import { silentLogger, type Logger } from "../../lib/logger.ts";

export type Protocol = "connect" | "grpc" | "grpc-web";

export interface EmbeddedQuarryFixture {
  url: string;
  dataDir: string;
  /** Connect protocol over HTTP/1.1. */
  client: QuarryClient;
  /** A client over another protocol, to prove the one port speaks all three. */
  clientFor(protocol: Protocol): QuarryClient;
  /** Stops the instance; removes the data folder unless keepData (to restart on it). */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

export interface EmbeddedQuarryOptions {
  env?: Env;
  /** Reuse a data folder (a restart) instead of a fresh one. */
  dataDir?: string;
  logger?: Logger;
}

/** Only what locates the installed model is taken from the outer environment. */
const INHERITED = ["QUARRY_MODELS_DIR", "HOME"];

export async function startEmbeddedQuarry(options: EmbeddedQuarryOptions = {}): Promise<EmbeddedQuarryFixture> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "quarry-e2e-")));
  const env: Env = {
    ...Object.fromEntries(INHERITED.map((name) => [name, process.env[name]])),
    QUARRY_DATA_DIR: dataDir,
    QUARRY_PORT: "0",
    QUARRY_HOST: "127.0.0.1",
    ...options.env,
  };
  const quarry = await startEmbedded(env, options.logger ?? silentLogger);
  const clients = new Map<Protocol, QuarryClient>();
  const clientFor = (protocol: Protocol) => {
    let client = clients.get(protocol);
    if (!client) {
      client = createClient(QuarryService, transportFor(quarry.url, protocol));
      clients.set(protocol, client);
    }
    return client;
  };
  return {
    url: quarry.url,
    dataDir,
    client: clientFor("connect"),
    clientFor,
    async stop({ keepData = false } = {}) {
      await quarry.stop();
      if (!keepData) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export function transportFor(baseUrl: string, protocol: Protocol): Transport {
  switch (protocol) {
    case "connect":
      return createConnectTransport({ baseUrl, httpVersion: "1.1" });
    case "grpc":
      return createGrpcTransport({ baseUrl });
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl, httpVersion: "1.1" });
  }
}
