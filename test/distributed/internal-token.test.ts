// QUARRY_INTERNAL_TOKEN between distributed services: a service started as `quarry serve index`
// answers a call only when it carries the token (health excepted), and the peers a service builds
// from its environment send it. Runs the real index service (on its SQLite store) on a real port.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService } from "../../cli/serve-service.ts";
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

  it("is sent by the peers a service builds from QUARRY_INTERNAL_TOKEN", async () => {
    const withToken = createClient(IndexService, remotePeers({ QUARRY_INDEX_URL: index.url, QUARRY_INTERNAL_TOKEN: TOKEN }, ["index"]).transport("index"));
    expect(await codeOf(() => withToken.listKnowledgeBases({}))).toBe("ok");
    const without = createClient(IndexService, remotePeers({ QUARRY_INDEX_URL: index.url }, ["index"]).transport("index"));
    expect(await codeOf(() => without.listKnowledgeBases({}))).toBe(Code.Unauthenticated);
  });
});
