// The embedder's RPC handlers through an in-memory router transport, with the production error
// mapping, over the hashing embedder (no model needed: what is under test is the RPC edge).
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { EmbedderService, EmbeddingKind } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import { silentLogger } from "../../lib/logger.ts";
import { rpcEdgeInterceptor } from "../../lib/rpc/interceptors.ts";
import { inProcessTransport } from "../../lib/rpc/transports.ts";
import { SingleModelPool } from "./embedder-pool.ts";
import { HashingEmbedder } from "../../lib/testing/hashing-embedder.ts";
import { embedderRoutes } from "./routes.ts";
import { codeOf } from "../../lib/rpc/testing/connect-code.ts";

const client = createClient(
  EmbedderService,
  inProcessTransport(embedderRoutes(new SingleModelPool(new HashingEmbedder({ dimension: 16, maxInputTokens: 128 }))), [rpcEdgeInterceptor(silentLogger)]),
);
describe("embedder routes", () => {
  it("embeds each text with its model's name, dimension and known-token share", async () => {
    const res = await client.embed({ texts: ["reset my password", "two-factor codes"], kind: EmbeddingKind.QUERY });
    expect(res).toMatchObject({ model: "test-hashing", dimension: 16 });
    expect(res.vectors.map((v) => v.values.length)).toEqual([16, 16]);
    expect(res.vectors[0].values).not.toEqual(res.vectors[1].values);
    expect(res.vectors[0].knownTokenShare).toBeGreaterThan(0);
  });

  it("tells the model's name, dimension and input limit", async () => {
    expect(await client.getModelInfo({})).toMatchObject({ model: "test-hashing", dimension: 16, maxInputTokens: 128 });
  });

  it("refuses a model it does not serve, too many texts, and a dimension other than the one expected", async () => {
    expect(await codeOf(client.getModelInfo({ model: "other-model" }))).toBe("InvalidArgument");
    expect(await codeOf(client.embed({ texts: ["x"], model: "other-model" }))).toBe("InvalidArgument");
    expect(await codeOf(client.embed({ texts: Array.from({ length: 4097 }, () => "x") }))).toBe("InvalidArgument");
    const mismatch = await client.embed({ texts: ["x"], expectedDimension: 384 }).catch((e: unknown) => ConnectError.from(e));
    expect((mismatch as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((mismatch as ConnectError).rawMessage).toMatch(/384/);
  });
});
