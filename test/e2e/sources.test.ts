// Sources that stay in sync, end to end on embedded Quarry: a real folder mutated between syncs
// (add, edit, rename, delete, a file replaced by one of another type) and a website served by a
// local node:http server whose pages change, disappear (404/410), link to new ones and hide a path
// behind robots.txt. After each sync the base holds exactly the current content, found by search;
// embedder calls are counted at the OpenAI-compatible embedding stub Quarry embeds through.
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { SourceSyncState, type Source } from "../../gen/quarry/common/v1/source_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import type { Env } from "../../lib/config.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { engineAddress } from "../support/engines.ts";
import { sourceSyncKit } from "../support/source-sync-kit.ts";
import { failure, runQuarryCli } from "./e2e-helpers.ts";

/** withThousand: the 1,000-file folder runs on SQLite only (its point is the sync, not the catalog backend; on an engine it would add minutes to CI). */
function describeSources(backend: string, backendEnv: () => Env, cleanup: () => Promise<void> = async () => {}, { withThousand = false } = {}) {
  describe(`sources kept in sync (${backend})`, () => {
    let quarry: EmbeddedQuarryFixture;
    let client: QuarryClient;
    let embeddings: OpenAiStub;
    const work: string[] = [];

    beforeAll(async () => {
      embeddings = await startOpenAiStub({ embeddingDimension: 64 });
      quarry = await startEmbeddedQuarry({
        env: {
          ...backendEnv(),
          QUARRY_EMBEDDING_PROVIDER: "openai",
          QUARRY_EMBEDDING_BASE_URL: embeddings.url,
          QUARRY_EMBEDDING_MODEL: "stub-embedding",
          QUARRY_EMBEDDING_DIMENSION: "64",
        },
      });
      client = quarry.client;
    }, 120_000);
    const { sync, holding } = sourceSyncKit(() => client, () => embeddings);

    afterAll(async () => {
      await quarry?.stop();
      await embeddings?.close();
      await Promise.all(work.map((dir) => rm(dir, { recursive: true, force: true })));
      await cleanup();
    });

    it("keeps a base equal to a folder through adds, edits, a rename, deletes and a change of type", async () => {
      const kb = `folder-${randomBytes(3).toString("hex")}`;
      await client.createKnowledgeBase({ name: kb });
      const root = await mkdtemp(join(tmpdir(), "quarry-source-folder-"));
      work.push(root);
      await mkdir(join(root, "sub"));
      await writeFile(join(root, "alpha.md"), "# Alpha\n\nThe alpha notes mention ALPHAONE in passing.\n");
      await writeFile(join(root, "bravo.txt"), "Bravo keeps the BRAVOONE ledger for the harbour office.\n");
      await writeFile(join(root, "sub", "charlie.txt"), "Charlie wrote CHARLIEONE on the tunnel map.\n");
      await writeFile(join(root, "report.txt"), "The plain report says REPORTTXT about the quarry.\n");
      await writeFile(join(root, "noise.log"), "LOGNOISE should never be ingested.\n");

      const { source } = await client.addSource({
        knowledgeBase: kb,
        source: { name: "notes", kind: { case: "folder", value: { path: root, exclude: ["**/*.log"] } }, tags: { team: "docs" } },
      });
      expect(source!.id).toMatch(/^src_/);

      const first = await sync(kb, "notes");
      expect(first.sync).toMatchObject({ state: SourceSyncState.DONE, added: 4, changed: 0, removed: 0, moved: 0, unchanged: 0, failed: 0 });
      expect(await holding(kb, "ALPHAONE")).toEqual(["alpha.md"]);
      expect(await holding(kb, "LOGNOISE")).toEqual([]);
      // The source's metadata, filterable like any other.
      expect(await holding(kb, "CHARLIEONE", { team: "docs", source_path: "sub/charlie.txt" })).toEqual(["sub/charlie.txt"]);
      expect(await holding(kb, "CHARLIEONE", { team: "other" })).toEqual([]);

      // Edit, rename (same bytes), delete, add, and a file replaced by one of another type.
      await writeFile(join(root, "alpha.md"), "# Alpha\n\nThe alpha notes now say ALPHATWO instead.\n");
      await mkdir(join(root, "moved"));
      await rename(join(root, "bravo.txt"), join(root, "moved", "bravo.txt"));
      await rm(join(root, "sub", "charlie.txt"));
      await writeFile(join(root, "delta.txt"), "Delta brings DELTAONE to the archive.\n");
      await rm(join(root, "report.txt"));
      await writeFile(join(root, "report.html"), "<html><body><h1>Report</h1><p>The page report says REPORTHTML now.</p></body></html>");

      const second = await sync(kb, "notes");
      expect(second.sync).toMatchObject({ state: SourceSyncState.DONE, added: 2, changed: 1, removed: 2, moved: 1, unchanged: 0, failed: 0 });
      // The moved file was re-pointed, not embedded again; only the new and changed texts were.
      expect(second.embedded.some((text) => text.includes("BRAVOONE"))).toBe(false);
      expect(second.embedded.some((text) => text.includes("ALPHATWO"))).toBe(true);
      expect(await holding(kb, "ALPHAONE")).toEqual([]);
      expect(await holding(kb, "ALPHATWO")).toEqual(["alpha.md"]);
      expect(await holding(kb, "CHARLIEONE")).toEqual([]);
      expect(await holding(kb, "DELTAONE")).toEqual(["delta.txt"]);
      expect(await holding(kb, "REPORTTXT")).toEqual([]);
      expect(await holding(kb, "REPORTHTML")).toEqual(["report.html"]);
      expect(await holding(kb, "BRAVOONE", { source_path: "moved/bravo.txt" })).toEqual(["bravo.txt"]);
      expect(await holding(kb, "BRAVOONE", { source_path: "bravo.txt" })).toEqual([]);

      const documents = (await client.listDocuments({ knowledgeBase: kb })).documents;
      expect(documents.map((d) => d.fileName).sort()).toEqual(["alpha.md", "bravo.txt", "delta.txt", "report.html"]);
      expect(documents.every((d) => d.metadata.source_id === source!.id && d.metadata.team === "docs" && d.metadata.source_modified)).toBe(true);

      // Nothing changed: nothing submitted, nothing embedded.
      const third = await sync(kb, "notes");
      expect(third.sync).toMatchObject({ state: SourceSyncState.DONE, added: 0, changed: 0, removed: 0, moved: 0, unchanged: 4, failed: 0 });
      expect(third.embedded).toEqual([]);

      // A new file where the moved one was is a document of its own, not the moved one overwritten.
      await writeFile(join(root, "bravo.txt"), "A new bravo file says BRAVONEW.\n");
      const fourth = await sync(kb, "notes");
      expect(fourth.sync).toMatchObject({ added: 1, unchanged: 4 });
      expect(await holding(kb, "BRAVOONE")).toEqual(["bravo.txt"]);
      expect(await holding(kb, "BRAVONEW")).toEqual(["bravo (2).txt"]);

      const listed = (await client.listSources({ knowledgeBase: kb })).sources;
      expect(listed.map((s: Source) => [s.name, s.lastSync?.added])).toEqual([["notes", 1]]);
    });

    it("keeps a base equal to a website: changed, gone (404/410), newly linked and robots-disallowed pages", async () => {
      const kb = `site-${randomBytes(3).toString("hex")}`;
      await client.createKnowledgeBase({ name: kb });
      const pages = new Map<string, { status: number; body: string; type?: string }>();
      const page = (title: string, text: string, links: string[] = []) => ({
        status: 200,
        body: `<html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</body></html>`,
      });
      pages.set("/robots.txt", { status: 200, body: "User-agent: *\nDisallow: /private/\n", type: "text/plain" });
      pages.set("/", page("Home", "The home page says HOMEPAGE.", ["/apple", "/banana#top", "/private/secret", "https://elsewhere.invalid/x"]));
      pages.set("/apple", page("Apple", "Apples are APPLEPAGE fruit."));
      pages.set("/banana", page("Banana", "Bananas are BANANAPAGE fruit."));
      pages.set("/private/secret", page("Secret", "SECRETPAGE must not be crawled."));
      const server: Server = createServer((req, res) => {
        const found = pages.get(new URL(req.url!, "http://x").pathname);
        if (!found) return void res.writeHead(404).end("not here");
        res.writeHead(found.status, { "content-type": found.type ?? "text/html; charset=utf-8" }).end(found.body);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        await client.addSource({
          knowledgeBase: kb,
          source: { name: "site", kind: { case: "website", value: { startUrls: [`${origin}/`], maxDepth: 2, requestsPerSecond: 1000 } }, tags: { origin: "web" } },
        });
        const first = await sync(kb, "site");
        expect(first.sync).toMatchObject({ state: SourceSyncState.DONE, added: 3, removed: 0, failed: 0 });
        expect(await holding(kb, "APPLEPAGE")).toHaveLength(1);
        expect(await holding(kb, "BANANAPAGE", { source_path: `${origin}/banana` })).toHaveLength(1);
        expect(await holding(kb, "SECRETPAGE")).toEqual([]);

        // /apple changes, /banana is gone (410), the home page links to a new /cherry, a missing /durian (404) and a failing /elder (500).
        pages.set("/apple", page("Apple", "Apples are now APPLENEW fruit."));
        pages.set("/banana", { status: 410, body: "gone" });
        pages.set("/", page("Home", "The home page says HOMEPAGE.", ["/apple", "/banana", "/cherry", "/durian", "/elder"]));
        pages.set("/cherry", page("Cherry", "Cherries are CHERRYPAGE fruit."));
        pages.set("/elder", { status: 500, body: "broken" });
        const second = await sync(kb, "site");
        expect(second.sync).toMatchObject({ state: SourceSyncState.DONE, added: 1, changed: 2, removed: 1, unchanged: 0, failed: 1 });
        expect(second.sync.errors).toEqual([{ $typeName: "quarry.common.v1.SourceSyncError", item: `${origin}/elder`, reason: `${origin}/elder answered 500 Internal Server Error` }]);
        expect(await holding(kb, "APPLEPAGE")).toEqual([]);
        expect(await holding(kb, "APPLENEW")).toHaveLength(1);
        expect(await holding(kb, "BANANAPAGE")).toEqual([]);
        expect(await holding(kb, "CHERRYPAGE", { origin: "web" })).toHaveLength(1);

        // The whole site down: the sync fails, and nothing is deleted.
        await new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        const third = await sync(kb, "site");
        expect(third.sync.state).toBe(SourceSyncState.FAILED);
        expect(third.sync.error).toContain("no start URL of the website answered");
        expect(await holding(kb, "CHERRYPAGE")).toHaveLength(1);
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });

    it.runIf(withThousand)("re-syncs an unchanged 1,000-file folder without submitting anything, and a change of 10 re-embeds those 10 only", async () => {
      const kb = `thousand-${randomBytes(3).toString("hex")}`;
      await client.createKnowledgeBase({ name: kb });
      const root = await mkdtemp(join(tmpdir(), "quarry-source-1000-"));
      work.push(root);
      const body = (i: number, marker: string) => `File ${i} of the archive records ${marker}${i} and nothing else of note.\n`;
      for (let i = 0; i < 1000; i++) await writeFile(join(root, `f${String(i).padStart(4, "0")}.txt`), body(i, "ORIGINAL"));
      await client.addSource({ knowledgeBase: kb, source: { name: "archive", kind: { case: "folder", value: { path: root } } } });

      const first = await sync(kb, "archive");
      expect(first.sync).toMatchObject({ added: 1000, failed: 0 });
      const again = await sync(kb, "archive");
      expect(again.sync).toMatchObject({ added: 0, changed: 0, removed: 0, moved: 0, unchanged: 1000, failed: 0 });
      expect(again.embedded).toEqual([]);
      const documents = await client.listDocuments({ knowledgeBase: kb });
      const versions = new Map(documents.documents.map((d) => [d.id, d.version]));

      for (let i = 0; i < 1000; i += 100) await writeFile(join(root, `f${String(i).padStart(4, "0")}.txt`), body(i, "EDITED"));
      const changed = await sync(kb, "archive");
      expect(changed.sync).toMatchObject({ added: 0, changed: 10, removed: 0, unchanged: 990, failed: 0 });
      // Every text embedded belongs to one of the ten edited files, and each of the ten was embedded.
      expect(changed.embedded.length).toBeGreaterThan(0);
      expect(changed.embedded.every((text) => /EDITED\d+/.test(text))).toBe(true);
      expect(new Set(changed.embedded.map((text) => /EDITED(\d+)/.exec(text)![1])).size).toBe(10);
      const after = (await client.listDocuments({ knowledgeBase: kb })).documents;
      expect(after.filter((d) => d.version !== versions.get(d.id))).toHaveLength(10);
    }, 600_000);

    it("is driven by `quarry source add|list|sync|remove`", async () => {
      const kb = `cli-${randomBytes(3).toString("hex")}`;
      await client.createKnowledgeBase({ name: kb });
      const root = await mkdtemp(join(tmpdir(), "quarry-source-cli-"));
      work.push(root);
      await writeFile(join(root, "one.md"), "# One\n\nThe CLI source holds CLIPHRASE.\n");
      const cli = (...args: string[]) => runQuarryCli([...args, "--url", quarry.url]);

      const added = await cli("source", "add", "handbook", "--kb", kb, "--folder", root, "--exclude", "**/*.log", "--tag", "team=ops", "--every", "6h");
      expect(added.stderr).toBe("");
      expect(added.stdout).toContain(`added handbook (src_`);
      expect(added.stdout).toContain(`folder ${root} exclude **/*.log; tags team=ops; every 21600s, next `);
      const synced = await cli("source", "sync", "handbook", "--kb", kb);
      expect(synced.code).toBe(0);
      expect(synced.stdout).toContain("added 1, changed 0, removed 0, moved 0, unchanged 0, failed 0");
      expect((await cli("source", "list", "--kb", kb)).stdout).toContain("last sync: done");
      const removed = await cli("source", "remove", "handbook", "--kb", kb, "--delete-documents");
      expect(removed.stdout).toBe("removed handbook and its documents\n");
      expect((await client.listDocuments({ knowledgeBase: kb })).documents).toEqual([]);
      const missing = await cli("source", "sync", "handbook", "--kb", kb);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("has no source handbook");
      const neither = await cli("source", "add", "x", "--kb", kb);
      expect(neither.code).toBe(1);
      expect(neither.stderr).toContain("name one of --folder, --s3, or --start/--sitemap for a website");
    });

    it("refuses bad settings, unknown sources and a source of another base, with the reason", async () => {
      const kb = `bad-${randomBytes(3).toString("hex")}`;
      await client.createKnowledgeBase({ name: kb });
      expect((await failure(() => client.addSource({ knowledgeBase: kb, source: { name: "x", kind: { case: "folder", value: { path: "relative/path" } } } }))).code).toBe(Code.InvalidArgument);
      expect((await failure(() => client.addSource({ knowledgeBase: kb, source: { name: "x", kind: { case: "website", value: { startUrls: ["ftp://x/"] } } } }))).code).toBe(Code.InvalidArgument);
      expect((await failure(() => client.addSource({ knowledgeBase: kb, source: { name: "x" } }))).code).toBe(Code.InvalidArgument);
      const folder = await mkdtemp(join(tmpdir(), "quarry-source-bad-"));
      work.push(folder);
      await client.addSource({ knowledgeBase: kb, source: { name: "x", kind: { case: "folder", value: { path: folder } } } });
      expect((await failure(() => client.addSource({ knowledgeBase: kb, source: { name: "x", kind: { case: "folder", value: { path: folder } } } }))).code).toBe(Code.AlreadyExists);
      expect((await failure(() => client.syncSource({ knowledgeBase: kb, source: "nope" }))).code).toBe(Code.NotFound);
      const other = `other-${randomBytes(3).toString("hex")}`;
      await client.createKnowledgeBase({ name: other });
      expect((await failure(() => client.syncSource({ knowledgeBase: other, source: "x" }))).code).toBe(Code.NotFound);
      // A folder that went away fails the sync with the reason and deletes nothing.
      await rm(folder, { recursive: true });
      const { source } = await client.syncSource({ knowledgeBase: kb, source: "x" });
      expect(source!.lastSync).toMatchObject({ state: SourceSyncState.FAILED });
      expect(source!.lastSync!.error).toContain("cannot be read");
      await client.removeSource({ knowledgeBase: kb, source: "x" });
      expect((await client.listSources({ knowledgeBase: kb })).sources).toEqual([]);
    });
  });
}

describeSources("SQLite", () => ({}), undefined, { withThousand: true });

const opensearch = engineAddress("OPENSEARCH_URL");
if (opensearch) {
  const prefix = `quarry-sources-${randomBytes(4).toString("hex")}`;
  describeSources("OpenSearch", () => ({ OPENSEARCH_URL: opensearch, QUARRY_OPENSEARCH_PREFIX: prefix }), () => deleteOpenSearchNamespace(opensearch, `${prefix}-`));
} else {
  describe.skip("sources kept in sync on OpenSearch (skipped: OPENSEARCH_URL not set)", () => {});
}
