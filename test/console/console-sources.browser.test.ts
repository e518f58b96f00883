// Sources in the console, in headless Chromium against an embedded Quarry, through the UI: a folder
// source of a temporary folder (add with the server's validation message, Sync now, the counts and
// the documents with their source path; a file edited and one deleted on disk, Sync now again), a
// synced document's source on its page, a website source on a local node:http server (its first
// page held back until the row has shown the sync running), a source removed with its documents,
// and a reader's view (the list, no actions) beside an editor's. Embedding goes through the
// OpenAI-compatible stub, so the machine's cores go to the browser and the pipeline.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Locator } from "playwright-core";
import { afterAll, expect, it } from "vitest";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { gatewayClient } from "../../client/gateway-client.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { chromiumRequirement, consoleInChromium, watchedPage } from "../support/console-browser.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { describeWith } from "../support/engines.ts";

const KB = "synced";
const INGEST_TIMEOUT = 120_000;
/** How long a poll waits for the page to catch up (the machine may be loaded; no step should take this long). */
const WAIT = { timeout: 30_000 };

/** A source row's last-sync counts, "added 3, changed 0, …" ("" before a sync has them). */
const countsOf = async (row: Locator) => (await row.getByTestId("sync-counts").locator(".count").allTextContents()).join(", ");

/** A small site whose front page answers only once `release()` is called (so a sync is seen running). */
async function startHeldSite(): Promise<{ url: string; release: () => void; close: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const pages: Record<string, string> = {
    "/": `<html><head><title>Harbour</title></head><body><h1>Harbour</h1><p>The harbour master keeps HARBOURFRONT tide tables.</p><a href="/pier.html">Pier</a> <a href="/timetable.html">Timetable</a></body></html>`,
    "/pier.html": `<html><head><title>Pier</title></head><body><h1>Pier</h1><p>Pier four is where PIERFOUR ferries leave.</p></body></html>`,
  };
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://site").pathname;
    // The timetable's server is down: a page that cannot be read now is a failed item with its reason.
    if (path === "/timetable.html") return void response.writeHead(503).end();
    const page = pages[path];
    if (!page) return void response.writeHead(404).end();
    const answer = () => response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
    if (request.url === "/") void released.then(answer);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    release,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describeWith(chromiumRequirement, "sources in the console (embedded Quarry)", (executablePath) => {
  let embeddings: OpenAiStub | undefined;
  let site: Awaited<ReturnType<typeof startHeldSite>> | undefined;
  let folder = "";
  // Registered before the session's hooks, so (after hooks run in reverse) these go after Quarry stops.
  afterAll(async () => {
    await site?.close();
    await embeddings?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });
  const ui = consoleInChromium(
    executablePath,
    async () => {
      embeddings = await startOpenAiStub({ embeddingDimension: 64 });
      return startEmbeddedQuarry({
        env: { QUARRY_EMBEDDING_PROVIDER: "openai", QUARRY_EMBEDDING_BASE_URL: embeddings.url, QUARRY_EMBEDDING_MODEL: "stub-embedding", QUARRY_EMBEDDING_DIMENSION: "64" },
      });
    },
    {
      prepare: async (quarry) => {
        await quarry.client.createKnowledgeBase({ name: KB });
        folder = await mkdtemp(join(tmpdir(), "quarry-console-source-"));
        await mkdir(join(folder, "sub"));
        await writeFile(join(folder, "alpha.md"), "# Alpha\n\nThe alpha notes mention ALPHAONE in passing.\n");
        await writeFile(join(folder, "bravo.txt"), "Bravo keeps the BRAVOONE ledger for the harbour office.\n");
        await writeFile(join(folder, "sub", "charlie.txt"), "Charlie wrote CHARLIEONE on the tunnel map.\n");
        site = await startHeldSite();
      },
      timeout: 120_000,
    },
  );
  const noErrors = () => expect(ui.tab.errors()).toEqual([]);
  const sourceRow = (name: string) => ui.page.getByRole("table").filter({ has: ui.page.getByRole("columnheader", { name: "Where" }) }).getByRole("row", { name, exact: true });
  const documentRows = () => ui.page.locator("tr[data-status]");

  it("adds a folder source (the server's message first), syncs it, and shows the counts and the documents with their source path", async () => {
    const { quarry, tab, page } = ui;
    await page.goto(`${quarry.url}/kb/${KB}`);
    await page.getByRole("heading", { name: "Sources" }).waitFor();
    await page.getByText("No sources: add a folder or a website").waitFor();
    await page.getByRole("button", { name: "Add source" }).click();
    const form = page.getByRole("form", { name: "New source" });
    await form.getByLabel("Name", { exact: true }).fill("notes");
    await form.getByLabel("Folder path").fill("notes-folder");
    await form.getByLabel("Tags").fill("team=docs");
    await form.getByRole("button", { name: "Add source" }).click();
    await expect.poll(() => form.getByRole("alert").textContent(), WAIT).toMatch(/needs an absolute path, not "notes-folder"/);
    tab.allow(/status of 400/);

    await form.getByLabel("Folder path").fill(folder);
    await form.getByRole("button", { name: "Add source" }).click();
    const row = sourceRow("notes");
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain(folder);
    await expect(row.textContent()).resolves.toContain("team=docs");
    await expect(row.textContent()).resolves.toContain("manual");
    await expect(row.getByTestId("sync-state").textContent()).resolves.toBe("never synced");

    await row.getByRole("button", { name: "Sync now" }).click();
    await expect.poll(() => countsOf(row), { timeout: 60_000 }).toBe("added 3, changed 0, removed 0, moved 0, unchanged 0, failed 0");
    await expect(row.getByTestId("sync-state").textContent()).resolves.toMatch(/^done .* · took \d/);
    await expect.poll(() => page.locator('tr[data-status="ready"]').count(), { timeout: INGEST_TIMEOUT }).toBe(3);
    const marks = await documentRows().getByTestId("source-mark").allTextContents();
    expect(marks.sort()).toEqual(["from notes: alpha.md", "from notes: bravo.txt", "from notes: sub/charlie.txt"]);
    await tab.screenshot("sources-folder-synced");
    noErrors();
  }, INGEST_TIMEOUT + 60_000);

  it("syncs an edited and a deleted file: changed 1, removed 1, and the removed document is gone", async () => {
    const { page } = ui;
    await writeFile(join(folder, "alpha.md"), "# Alpha\n\nThe alpha notes now say ALPHATWO instead, at some length.\n");
    await rm(join(folder, "bravo.txt"));
    const row = sourceRow("notes");
    await row.getByRole("button", { name: "Sync now" }).click();
    await expect.poll(() => countsOf(row), { timeout: 60_000 }).toBe("added 0, changed 1, removed 1, moved 0, unchanged 1, failed 0");
    await expect.poll(() => documentRows().count(), WAIT).toBe(2);
    await expect.poll(() => page.locator('tr[data-status="ready"]').count(), { timeout: INGEST_TIMEOUT }).toBe(2);
    expect(await page.getByRole("row", { name: "bravo.txt" }).count()).toBe(0);
    noErrors();
  }, INGEST_TIMEOUT + 60_000);

  it("opens a synced document and shows its source: name and kind, path, modified time, tags", async () => {
    const { page } = ui;
    await page.getByRole("link", { name: "sub/charlie.txt" }).click();
    const panel = page.locator("dl.document-source");
    await panel.waitFor();
    await expect.poll(() => panel.textContent(), WAIT).toContain("notes (folder)");
    const text = (await panel.textContent())!;
    expect(text).toContain("Pathsub/charlie.txt");
    expect(text).toMatch(/Modified\d{1,2} \w{3} \d{4}/);
    expect(text).toContain("Tagsteam=docs");
    await page.getByRole("link", { name: KB }).click();
    await page.getByRole("heading", { name: "Sources" }).waitFor();
    noErrors();
  });

  it("syncs a website source: while its front page is held the row shows the sync running and Sync now is disabled; then the counts and the page that failed, with its reason", async () => {
    const { page, tab } = ui;
    await page.getByRole("button", { name: "Add source" }).click();
    const form = page.getByRole("form", { name: "New source" });
    await form.getByLabel("Name", { exact: true }).fill("site");
    await form.getByLabel("Kind").selectOption({ label: "Website" });
    await form.getByLabel("Start URLs").fill(site!.url);
    await form.getByLabel("Link depth").fill("1");
    await form.getByLabel("Requests per second").fill("20");
    await form.getByLabel("Sync every").fill("6h");
    await form.getByRole("button", { name: "Add source" }).click();
    const row = sourceRow("site");
    await row.waitFor();
    await expect(row.getByRole("link", { name: site!.url }).count()).resolves.toBe(1);
    await expect(row.textContent()).resolves.toMatch(/every 6 hnext \d/);

    await row.getByRole("button", { name: "Sync now" }).click();
    // "since …" comes from the server's record of the running sync, which only polling brings.
    await expect.poll(() => row.getByTestId("sync-state").textContent(), { timeout: 30_000 }).toMatch(/^syncing since \d/);
    expect(await row.getByRole("button", { name: "Syncing…" }).isDisabled()).toBe(true);
    await tab.screenshot("sources-syncing");
    site!.release();
    await expect.poll(() => countsOf(row), { timeout: 60_000 }).toBe("added 2, changed 0, removed 0, moved 0, unchanged 0, failed 1");
    await expect(row.getByRole("list", { name: "Items that failed" }).textContent()).resolves.toBe(`${site!.url}timetable.html: ${site!.url}timetable.html answered 503 Service Unavailable`);
    await expect(row.getByRole("button", { name: "Sync now" }).isEnabled()).resolves.toBe(true);
    await expect.poll(() => page.locator('tr[data-status="ready"]').count(), { timeout: INGEST_TIMEOUT }).toBe(4);
    const marks = await documentRows().getByTestId("source-mark").allTextContents();
    expect(marks).toEqual(expect.arrayContaining([`from site: ${site!.url}`, `from site: ${site!.url}pier.html`]));
    await tab.screenshot("sources");

    // A page's document links to its URL.
    await page.getByRole("link", { name: /\/pier\.html$/ }).first().click();
    const panel = page.locator("dl.document-source");
    await expect.poll(() => panel.textContent(), WAIT).toContain("site (website)");
    await expect(panel.getByRole("link", { name: `${site!.url}pier.html` }).getAttribute("href")).resolves.toBe(`${site!.url}pier.html`);
    await page.getByRole("link", { name: KB }).click();
    await sourceRow("site").waitFor();
    noErrors();
  }, INGEST_TIMEOUT + 60_000);

  it("shows each source as a card on a 390 px phone, without a sideways scroll", async () => {
    const { tab, page } = ui;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const row = sourceRow("site");
      for (const label of ["Where", "Schedule", "Last sync"]) {
        const box = (await row.locator(`td[data-label="${label}"]`).boundingBox())!;
        expect(box.x + box.width, label).toBeLessThanOrEqual(390);
      }
      const box = (await row.getByRole("button", { name: "Sync now" }).boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(390);
      const overflow = await page.locator(".source-panel .table-wrap").evaluate((el) => el.scrollWidth - el.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await tab.screenshot("sources-phone");
    } finally {
      await page.setViewportSize({ width: 1366, height: 860 });
    }
    noErrors();
  });

  it("removes a source with its documents after a confirmation that says they go", async () => {
    const { quarry, page } = ui;
    const row = sourceRow("site");
    await row.getByRole("button", { name: "Remove" }).click();
    const ask = row.getByRole("group", { name: "Remove site?" });
    await ask.getByRole("button", { name: "Remove site; its 2 documents stay" }).waitFor();
    await ask.getByLabel("Also delete the documents it made").check();
    await ask.getByRole("button", { name: "Remove site and delete its 2 documents" }).click();
    await expect.poll(() => row.count(), WAIT).toBe(0);
    await expect.poll(() => documentRows().count(), WAIT).toBe(2);
    const left = (await quarry.client.listDocuments({ knowledgeBase: KB })).documents.map((d) => d.metadata.source_path).sort();
    expect(left).toEqual(["alpha.md", "sub/charlie.txt"]);
    expect((await quarry.client.listSources({ knowledgeBase: KB })).sources.map((s) => s.name)).toEqual(["notes"]);
    noErrors();
  });

  it("shows a reader the sources without actions, and an editor with them", async () => {
    const { quarry, browser } = ui;
    // The first key needs none; after it, keys are on and the others are made with it.
    const admin = gatewayClient(quarry.url, (await quarry.client.createApiKey({ name: "admin", role: ApiKeyRole.ADMIN })).secret);
    const keyOf = async (role: ApiKeyRole) => (await admin.createApiKey({ name: ApiKeyRole[role].toLowerCase(), role })).secret;
    const open = async (secret: string) => {
      const tab = await watchedPage(browser);
      await tab.context.addInitScript((key) => sessionStorage.setItem("quarry.apiKey", key), secret);
      await tab.page.goto(`${quarry.url}/kb/${KB}`);
      await tab.page.getByRole("row", { name: "notes", exact: true }).waitFor();
      return tab;
    };

    const reader = await open(await keyOf(ApiKeyRole.READER));
    // Its role is found out by a call the access rules refuse to a reader (api/can-edit.ts).
    reader.allow(/status of 403/);
    await reader.page.getByText("This key is a reader's").waitFor();
    await expect(countsOf(reader.page.getByRole("row", { name: "notes", exact: true }))).resolves.toBe("added 0, changed 1, removed 1, moved 0, unchanged 1, failed 0");
    expect(await reader.page.getByRole("button", { name: "Sync now" }).count()).toBe(0);
    expect(await reader.page.getByRole("button", { name: "Add source" }).count()).toBe(0);
    expect(await reader.page.getByRole("button", { name: "Remove" }).count()).toBe(0);
    expect(reader.errors()).toEqual([]);
    await reader.context.close();

    const editor = await open(await keyOf(ApiKeyRole.EDITOR));
    editor.allow(/status of 400/);
    await editor.page.getByRole("row", { name: "notes", exact: true }).getByRole("button", { name: "Sync now" }).waitFor();
    expect(await editor.page.getByText("This key is a reader's").count()).toBe(0);
    expect(await editor.page.getByRole("button", { name: "Add source" }).count()).toBe(1);
    expect(editor.errors()).toEqual([]);
    await editor.context.close();
  });
});
