// QUARRY_INTERNAL_TOKEN between distributed services: a service started as `quarry serve index`
// answers a call only when it carries the token (health excepted), and the peers a service builds
// from its environment send it — including a distributed gateway checking API keys against the
// index. Runs the real index and gateway services (the index on its SQLite store) on real ports.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient } from "../../client/gateway-client.ts";
import { startService } from "../../app/serve-service.ts";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.ts";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { silentLogger } from "../../lib/logger.ts";
import { remotePeers } from "../../lib/rpc/peers.ts";
import type { RunningService } from "../../lib/service-runtime.ts";

const TOKEN = "internal-token-for-this-test-0123456789";

async function codeOf(call: () => Promise<unknown>): Promise<Code | "ok"> {
  try {
    await call();
    return "ok";
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

describe("the internal token", () => {
  let dir: string;
  let index: RunningService;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "quarry-internal-"));
    index = await startService("index", { QUARRY_DATA_DIR: dir, QUARRY_INDEX_PORT: "0", QUARRY_HOST: "127.0.0.1", QUARRY_INTERNAL_TOKEN: TOKEN }, silentLogger);
  });
  afterAll(async () => {
    await index?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a call without the token or with another one, and keeps health open", async () => {
    const bare = createClient(IndexService, createGrpcTransport({ baseUrl: index.url }));
    expect(await codeOf(() => bare.listKnowledgeBases({}))).toBe(Code.Unauthenticated);
    expect(await codeOf(() => bare.listKnowledgeBases({}, { headers: { authorization: `Bearer ${TOKEN}x` } }))).toBe(Code.Unauthenticated);
    expect(await codeOf(() => bare.deleteKnowledgeBase({ knowledgeBaseId: "kb_x" }))).toBe(Code.Unauthenticated);
    const health = createClient(Health, createGrpcTransport({ baseUrl: index.url }));
    expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("carries a gateway's key checks to the index over gRPC: created keys work, calls without one get 401", async () => {
    const bootstrap = "bootstrap-key-for-the-distributed-gateway";
    const peers = Object.fromEntries(["PARSER", "CHUNKER", "EMBEDDER", "INDEX", "ANSWER"].map((p) => [`QUARRY_${p}_URL`, index.url]));
    const gateway = await startService(
      "gateway",
      { ...peers, QUARRY_DATA_DIR: dir, QUARRY_PORT: "0", QUARRY_HOST: "127.0.0.1", QUARRY_INTERNAL_TOKEN: TOKEN, QUARRY_API_KEY: bootstrap },
      silentLogger,
    );
    try {
      const admin = gatewayClient(gateway.url, bootstrap);
      const { secret } = await admin.createApiKey({ name: "over-grpc", role: ApiKeyRole.READER });
      expect(await codeOf(() => gatewayClient(gateway.url, secret).listKnowledgeBases({}))).toBe("ok");
      expect(await codeOf(() => gatewayClient(gateway.url, secret).createKnowledgeBase({ name: "no" }))).toBe(Code.PermissionDenied);
      const res = await fetch(`${gateway.url}/quarry.gateway.v1.QuarryService/ListKnowledgeBases`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      expect(res.status).toBe(401);
      await admin.revokeApiKey({ apiKey: "over-grpc" });
      expect(await codeOf(() => gatewayClient(gateway.url, secret).listKnowledgeBases({}))).toBe(Code.Unauthenticated);
    } finally {
      await gateway.stop();
    }
  });

  it("is sent by the peers a service builds from QUARRY_INTERNAL_TOKEN", async () => {
    const withToken = createClient(IndexService, remotePeers({ QUARRY_INDEX_URL: index.url, QUARRY_INTERNAL_TOKEN: TOKEN }, ["index"]).transport("index"));
    expect(await codeOf(() => withToken.listKnowledgeBases({}))).toBe("ok");
    const without = createClient(IndexService, remotePeers({ QUARRY_INDEX_URL: index.url }, ["index"]).transport("index"));
    expect(await codeOf(() => without.listKnowledgeBases({}))).toBe(Code.Unauthenticated);
  });
});
