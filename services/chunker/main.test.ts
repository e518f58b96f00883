// The chunker before and after it learns the embedder's input limit: its RPCs say unavailable
// (not a guessed limit) until prepare has asked the embedder, and work from then on.
import { describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { ChunkerService } from "../../gen/quarry/chunker/v1/chunker_pb.ts";
import { EmbedderService } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import { silentLogger } from "../../lib/logger.ts";
import { inProcessTransport } from "../../lib/rpc/transports.ts";
import type { SharedDeps } from "../../lib/service-runtime.ts";
import { assembleChunker } from "./main.ts";

describe("assembleChunker", () => {
  it("answers unavailable until prepare has the embedder's limit, then chunks within it", async () => {
    const embedder = createRouterTransport((router) =>
      router.service(EmbedderService, { getModelInfo: () => ({ maxInputTokens: 128 }) } as never),
    );
    const shared = { bus: undefined, logger: silentLogger, redrive: undefined } as unknown as SharedDeps;
    const chunker = assembleChunker(process.env, { transport: () => embedder }, shared);
    const client = createClient(ChunkerService, inProcessTransport(chunker.server.routes, chunker.server.interceptors));

    const early = await client.resolveChunkingSettings({}).catch((error: unknown) => ConnectError.from(error));
    expect(early).toBeInstanceOf(ConnectError);
    expect((early as ConnectError).code).toBe(Code.Unavailable);
    expect((early as ConnectError).rawMessage).toMatch(/not yet learned the embedder's input limit/);

    await chunker.prepare!((_what, attempt) => attempt());
    const settings = await client.resolveChunkingSettings({});
    expect(settings.maxChunkTokens).toBeGreaterThan(0);
    expect(settings.maxChunkTokens).toBeLessThanOrEqual(128);
  });
});
