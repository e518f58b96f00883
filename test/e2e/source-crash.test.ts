// A sync killed with SIGKILL resumes without duplicates or losses. Embedded Quarry runs as a child
// process (`quarry serve`); a folder sync is watched over WatchSourceSync (the real transport) and the
// process is killed once the stream says some files are submitted and not all — decided by what the
// stream shows, never by a timer. After a restart on the same data folder a second sync finishes the
// job: each path is one document, each document's chunk is stored once, every file's phrase is found.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startEmbeddedServe, THIS_QUARRY_BIN, type QuarryProcess } from "../../bench/quarry-process.ts";
import { gatewayClient } from "../../client/gateway-client.ts";
import { RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { SourceSyncState, type SourceSync } from "../../gen/quarry/common/v1/source_pb.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { waitFor } from "../distributed/wait-for.ts";
import { settle } from "../support/source-sync-kit.ts";

const FILES = 200;
const name = (i: number) => `f${String(i).padStart(4, "0")}.txt`;
const phrase = (i: number) => `CRASHPHRASE${i}X`;

describe("a source sync killed with SIGKILL", () => {
  let dataDir: string | undefined;
  let folder: string | undefined;
  let running: QuarryProcess | undefined;
  let embeddings: OpenAiStub | undefined;
  afterAll(async () => {
    if (running && running.child.exitCode === null) running.child.kill("SIGKILL");
    await embeddings?.close();
    for (const dir of [dataDir, folder]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("resumes on the next sync after a restart: one document per path, chunks stored once, nothing lost", async () => {
    embeddings = await startOpenAiStub({ embeddingDimension: 64 });
    dataDir = await mkdtemp(join(tmpdir(), "quarry-source-crash-"));
    folder = await mkdtemp(join(tmpdir(), "quarry-source-crash-files-"));
    for (let i = 0; i < FILES; i++) await writeFile(join(folder, name(i)), `File ${i} of the crash archive holds ${phrase(i)} and nothing else.\n`);
    const env = {
      QUARRY_EMBEDDING_PROVIDER: "openai",
      QUARRY_EMBEDDING_BASE_URL: embeddings.url,
      QUARRY_EMBEDDING_MODEL: "stub-embedding",
      QUARRY_EMBEDDING_DIMENSION: "64",
      // The killed gateway's sync lease lapses after this; the restarted one's schedule then marks
      // the sync it left "running" as interrupted.
      QUARRY_LEASE_MS: "3000",
      QUARRY_SOURCE_TICK_MS: "500",
    };
    running = await startEmbeddedServe(dataDir, THIS_QUARRY_BIN, env);
    let client = gatewayClient(running.url);
    const kb = `crash-${randomBytes(3).toString("hex")}`;
    await client.createKnowledgeBase({ name: kb });
    await client.addSource({ knowledgeBase: kb, source: { name: "archive", kind: { case: "folder", value: { path: folder } } } });

    const first = client.syncSource({ knowledgeBase: kb, source: "archive" });
    first.catch(() => {}); // ends with the process
    // Watch until the stream shows the sync part-way through its submissions. A watch that comes
    // before the sync has begun answers the (absent) last sync and ends: watch again.
    const seen: SourceSync[] = [];
    let killedAt: SourceSync | undefined;
    while (!killedAt) {
      for await (const { sync } of client.watchSourceSync({ knowledgeBase: kb, source: "archive" }, { signal: AbortSignal.timeout(120_000) })) {
        seen.push(sync!);
        if (sync!.state !== SourceSyncState.RUNNING) throw new Error(`the sync ended before it could be killed: ${JSON.stringify(sync)}`);
        if (sync!.submitted >= 5) {
          running.child.kill("SIGKILL");
          killedAt = sync;
          break;
        }
      }
    }
    await running.exited;
    // The stream showed a running sync's counts as they grew.
    expect(seen.every((s) => s.state === SourceSyncState.RUNNING)).toBe(true);
    expect(seen.at(-1)!.listed).toBe(FILES);
    expect(killedAt.submitted).toBeLessThan(FILES);

    running = await startEmbeddedServe(dataDir, THIS_QUARRY_BIN, env);
    client = gatewayClient(running.url);
    // Killed mid-way: some of the files became documents, not all.
    const before = (await client.listDocuments({ knowledgeBase: kb })).documents.length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(FILES);
    console.log(`killed at ${killedAt.submitted} of ${FILES} submitted; ${before} documents after the restart`);

    // The record the killed gateway left says running until its lease lapses; then it reads interrupted.
    const listed = async () => (await client.listSources({ knowledgeBase: kb })).sources.find((s) => s.name === "archive")!.lastSync!;
    await waitFor("the killed sync marked interrupted", async () => ((await listed()).state === SourceSyncState.FAILED ? true : undefined), 60_000);
    expect((await listed()).error).toMatch(/^interrupted/);

    const second = (await client.syncSource({ knowledgeBase: kb, source: "archive" })).source!.lastSync!;
    expect(second).toMatchObject({ state: SourceSyncState.DONE, listed: FILES, removed: 0, moved: 0, changed: 0, failed: 0 });
    // Every file is accounted for once: added now, or unchanged (recorded, or resubmitted and found equal).
    expect(second.added + second.unchanged).toBe(FILES);
    expect(second.added).toBeLessThan(FILES);
    await settle(client, kb);

    const documents = (await client.listDocuments({ knowledgeBase: kb })).documents;
    expect(documents.map((d) => d.fileName).sort()).toEqual(Array.from({ length: FILES }, (_, i) => name(i)));
    expect(documents.filter((d) => d.chunkCount !== 1).map((d) => `${d.fileName}: ${d.chunkCount} chunks, ${d.errorMessage}`)).toEqual([]);
    // Each file's phrase is found, in one chunk of its own document.
    for (let i = 0; i < FILES; i++) {
      const { hits } = await client.search({ query: phrase(i), knowledgeBases: [kb], settings: { mode: RetrievalMode.BM25, topK: 5 } });
      const holding = hits.filter((h) => h.chunk!.text.includes(phrase(i)));
      expect(holding.map((h) => h.fileName), phrase(i)).toEqual([name(i)]);
    }
    // The cursor holds every file, so a third sync has nothing to do.
    const third = (await client.syncSource({ knowledgeBase: kb, source: "archive" })).source!.lastSync!;
    expect(third).toMatchObject({ state: SourceSyncState.DONE, unchanged: FILES, submitted: 0 });
  }, 600_000);
});
