// A sync's progress streams while it runs, over the real transport: WatchSourceSync, and the
// progress `quarry source sync` prints (client/sync-with-progress.ts; its lines: cli/sync-progress.test.ts). The website the source reads holds one page back until the
// test has seen the progress, so the sync is certainly running while it is watched (no timing).
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SourceSyncState, type SourceSync } from "../../gen/quarry/common/v1/source_pb.ts";
import { syncWithProgress } from "../../client/sync-with-progress.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";

/** The running states the progress callback got; `seen` resolves at the first with `listed` items. */
function collecting(listed: number) {
  const states: SourceSync[] = [];
  let found!: () => void;
  const seen = new Promise<void>((resolve) => (found = resolve));
  const onProgress = (sync: SourceSync) => {
    states.push(sync);
    if (sync.listed >= listed) found();
  };
  return { onProgress, seen, states };
}

describe("a source sync's progress, streamed", () => {
  let quarry: EmbeddedQuarryFixture;
  let embeddings: OpenAiStub;
  let server: Server;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let origin = "";

  beforeAll(async () => {
    embeddings = await startOpenAiStub({ embeddingDimension: 64 });
    quarry = await startEmbeddedQuarry({
      env: { QUARRY_EMBEDDING_PROVIDER: "openai", QUARRY_EMBEDDING_BASE_URL: embeddings.url, QUARRY_EMBEDDING_MODEL: "stub-embedding", QUARRY_EMBEDDING_DIMENSION: "64" },
    });
    const html = (title: string, body: string) => `<html><head><title>${title}</title></head><body><h1>${title}</h1><p>${body}</p></body></html>`;
    server = createServer((req, res) => {
      const path = new URL(req.url!, "http://x").pathname;
      const send = (body: string) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
      if (path === "/") send(html("Home", 'The home page links to <a href="/held">the held page</a>.'));
      else if (path === "/held") void released.then(() => send(html("Held", "The held page answers once released.")));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    release();
    server?.closeAllConnections();
    server?.close();
    await quarry?.stop();
    await embeddings?.close();
  });

  it("streams a running sync's counts and ends with the summary; the progress `quarry source sync` shows gets them as they go", async () => {
    const client = quarry.client;
    const kb = `progress-${randomBytes(3).toString("hex")}`;
    await client.createKnowledgeBase({ name: kb });
    await client.addSource({ knowledgeBase: kb, source: { name: "site", kind: { case: "website", value: { startUrls: [`${origin}/`], maxDepth: 1, requestsPerSecond: 1000 } } } });

    // Before any sync there is nothing to stream.
    const none: SourceSync[] = [];
    for await (const { sync } of client.watchSourceSync({ knowledgeBase: kb, source: "site" })) none.push(sync!);
    expect(none).toEqual([]);

    const progress = collecting(1);
    const synced = syncWithProgress(client, kb, "site", progress.onProgress);
    await progress.seen;
    // The sync waits on the held page: a watcher now sees it running, then its end.
    const watched: SourceSync[] = [];
    const watching = (async () => {
      for await (const { sync } of client.watchSourceSync({ knowledgeBase: kb, source: "site" })) watched.push(sync!);
    })();
    const listed = (await client.listSources({ knowledgeBase: kb })).sources[0]!.lastSync!;
    expect(listed).toMatchObject({ state: SourceSyncState.RUNNING, listed: 1 });
    release();
    const result = await synced;
    await watching;

    expect(result.source!.lastSync).toMatchObject({ state: SourceSyncState.DONE, listed: 2, submitted: 2, added: 2, failed: 0 });
    expect(watched[0]).toMatchObject({ state: SourceSyncState.RUNNING });
    expect(watched.slice(0, -1).every((s) => s.state === SourceSyncState.RUNNING)).toBe(true);
    expect(watched.at(-1)).toMatchObject({ state: SourceSyncState.DONE, listed: 2, added: 2 });
    // The progress shown: running states only, counts that never go back.
    expect(progress.states.every((state) => state.state === SourceSyncState.RUNNING)).toBe(true);
    expect(progress.states.some((state) => state.listed === 1 && state.submitted === 0)).toBe(true);
    expect(progress.states.map((state) => state.listed + state.submitted)).toEqual(progress.states.map((state) => state.listed + state.submitted).sort((a, b) => a - b));

    // After the sync, a watch answers the last one and ends.
    const after: SourceSync[] = [];
    for await (const { sync } of client.watchSourceSync({ knowledgeBase: kb, source: "site" })) after.push(sync!);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ state: SourceSyncState.DONE, added: 2 });
  });
});
