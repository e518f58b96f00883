// The console's first-hour traps (issue 25), in headless Chromium against an embedded Quarry: a
// Word file reads in the default mode and a failed document does not pose as a searchable one; the
// documents table is usable on a 390 px phone; the bundled Chinese font draws bold headings and
// form controls; pickers choose nothing for the user; and the API-key form neither locks the
// console out without saying so nor hides the secret it has just shown. The key test turns keys on,
// so it runs last.
import { expect, it } from "vitest";
import { fixtureBytes } from "../fixtures/fixture-documents.ts";
import { chromiumRequirement, consoleInChromium } from "../support/console-browser.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { upload, watchAll } from "../e2e/e2e-helpers.ts";

const KB = "码头 harbour";

describeWith(chromiumRequirement, "the console's first hour (embedded Quarry)", (executablePath) => {
  const ui = consoleInChromium(executablePath, () => startEmbeddedQuarry(), {
    prepare: async (quarry) => {
      await quarry.client.createKnowledgeBase({ name: "archive" });
      await quarry.client.createKnowledgeBase({ name: KB });
      const ids: string[] = [];
      for (const name of ["canal-boating.docx", "scanned.pdf"] as const) {
        const res = await upload(quarry.client, KB, name, await fixtureBytes(name));
        ids.push(res.document!.id);
      }
      await quarry.client.createKnowledgeBase({ name: "one" });
      ids.push((await upload(quarry.client, "one", "note.txt", new TextEncoder().encode("The ferry leaves at nine."))).document!.id);
      await watchAll(quarry.client, ids, 120_000);
    },
    timeout: 150_000,
  });
  const noErrors = () => expect(ui.tab.errors()).toEqual([]);

  it("reads a Word file without Tika, and shows a failed document as not searched, with what Retry does", async () => {
    const { quarry, page } = ui;
    await page.goto(`${quarry.url}/kb/${encodeURIComponent(KB)}`);
    const docx = page.getByRole("row", { name: "canal-boating.docx" });
    await expect.poll(() => docx.getAttribute("data-status"), { timeout: 30_000 }).toBe("ready");
    await expect(docx.getByRole("switch", { name: "canal-boating.docx enabled" }).isChecked()).resolves.toBe(true);

    const failed = page.getByRole("row", { name: "scanned.pdf" });
    await expect(failed.getAttribute("data-status")).resolves.toBe("failed");
    await expect(failed.textContent()).resolves.toMatch(/has no text layer/);
    expect(await failed.getByRole("switch").count()).toBe(0);
    await expect(failed.getByTestId("not-searched").textContent()).resolves.toBe("not searched");
    const retry = failed.getByRole("button", { name: "Retry" });
    await expect(retry.getAttribute("title")).resolves.toMatch(/fails the same way until its cause is fixed/);
    expect(await failed.getByRole("button", { name: "Re-ingest" }).count()).toBe(0);
    noErrors();
  });

  it("counts in words that agree with the number: 1 document, 1 chunk", async () => {
    const { quarry, page } = ui;
    await page.goto(`${quarry.url}/kb/one`);
    await expect.poll(() => page.locator(".screen-head p.muted").textContent()).toMatch(/^1 document · 1 chunk · \d+ tokens · /);
    await page.goto(`${quarry.url}/kb/${encodeURIComponent(KB)}`);
    await expect.poll(() => page.locator(".screen-head p.muted").textContent()).toMatch(/^2 documents · \d+ chunks · /);
    noErrors();
  });

  it("shows every column of the documents table on a 390 px phone, without a sideways scroll", async () => {
    const { tab, page } = ui;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const row = page.getByRole("row", { name: "canal-boating.docx" });
      for (const label of ["Size", "Chunks", "Enabled"]) {
        const cell = row.locator(`td[data-label="${label}"]`);
        const box = (await cell.boundingBox())!;
        expect(box, label).not.toBeNull();
        expect(box.x, label).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, label).toBeLessThanOrEqual(390);
        // Each value says what it is, since the header row is not shown on a phone.
        await expect(cell.evaluate((td) => getComputedStyle(td, "::before").content)).resolves.toContain(label);
      }
      for (const name of ["Re-ingest", "Delete"]) {
        const box = (await row.getByRole("button", { name }).boundingBox())!;
        expect(box.x + box.width, name).toBeLessThanOrEqual(390);
      }
      const overflow = await page.locator(".table-wrap").evaluate((el) => el.scrollWidth - el.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.evaluate(() => document.fonts.ready);
      await tab.screenshot("documents-phone");
    } finally {
      await page.setViewportSize({ width: 1366, height: 860 });
    }
    noErrors();
  });

  it("draws Chinese in bold headings and in form controls with the bundled font", async () => {
    const { quarry, page } = ui;
    await page.goto(`${quarry.url}/kb/${encodeURIComponent(KB)}`);
    await page.getByRole("heading", { name: KB }).waitFor();
    await page.evaluate(() => document.fonts.ready);
    const faces = await page.evaluate(() =>
      [...document.fonts].filter((f) => f.family.replace(/['"]/g, "") === "Noto Sans SC" && f.status === "loaded").map((f) => f.weight),
    );
    // The heading is bold: its Chinese must come from a bold face of the bundled font, not a box.
    expect(faces).toContain("700");
    expect(await page.evaluate(() => getComputedStyle(document.querySelector("h1")!).fontWeight)).toBe("700");
    await ui.tab.screenshot("documents-chinese-heading", { fullPage: false });
    await page.getByRole("link", { name: "Retrieval test" }).click();
    const query = page.getByRole("form", { name: "Retrieval test" }).getByLabel("Query");
    await expect(query.evaluate((el) => getComputedStyle(el).fontFamily)).resolves.toContain("Noto Sans SC");
    // No Chinese on this screen but in a placeholder to come: its glyphs are there already, in both weights.
    await page.goto(`${quarry.url}/keys`);
    await page.getByRole("form", { name: "New API key" }).waitFor();
    await page.evaluate(() => document.fonts.ready);
    const wholeFaces = () =>
      page.evaluate(() =>
        [...document.fonts]
          .filter((f) => f.family.replace(/['"]/g, "") === "Noto Sans SC" && f.unicodeRange === "U+0-10FFFF" && f.status === "loaded")
          .map((f) => f.weight)
          .sort(),
      );
    await expect.poll(wholeFaces).toEqual(["400", "700"]);
    noErrors();
  });

  it("starts every knowledge-base picker empty and asks for a choice", async () => {
    const { quarry, page } = ui;
    await page.goto(`${quarry.url}/retrieval`);
    const search = page.getByRole("form", { name: "Retrieval test" });
    await search.getByRole("checkbox", { name: "archive" }).waitFor();
    expect(await search.getByRole("checkbox", { checked: true }).count()).toBe(0);
    await search.getByLabel("Query").fill("lock gates");
    await expect(search.getByRole("button", { name: "Search" }).isDisabled()).resolves.toBe(true);
    await expect(search.textContent()).resolves.toContain("choose at least one");
    await search.getByRole("checkbox", { name: KB }).check();
    await search.getByRole("button", { name: "Search" }).click();
    await page.getByRole("article", { name: "result 1", exact: true }).waitFor();

    await page.getByRole("link", { name: "Chat" }).click();
    await page.getByRole("checkbox", { name: "archive" }).waitFor();
    expect(await page.getByRole("checkbox", { checked: true }).count()).toBe(0);

    await page.getByRole("link", { name: "Assistants" }).click();
    await page.getByRole("button", { name: /New assistant/ }).click();
    const form = page.getByRole("form", { name: /assistant/i });
    await form.getByRole("checkbox", { name: "archive" }).waitFor();
    expect(await form.getByRole("checkbox", { checked: true }).count()).toBe(0);
    await form.getByRole("textbox", { name: "Name" }).fill("keeper");
    await expect(form.getByRole("button", { name: "Create" }).isDisabled()).resolves.toBe(true);
    await expect(form.textContent()).resolves.toContain("Choose at least one.");
    noErrors();
  });

  it("defaults the first key to admin, names the lock-out before it, and keeps the secret with a copy button", async () => {
    const { quarry, page, tab } = ui;
    await tab.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: quarry.url });
    await page.goto(`${quarry.url}/keys`);
    const form = page.getByRole("form", { name: "New API key" });
    await expect.poll(() => page.getByText("No keys:").count()).toBe(1);
    await expect(form.getByLabel("Role").inputValue()).resolves.toBe(String(3));
    await expect(form.getByLabel("Role").locator("option:checked").textContent()).resolves.toBe("admin");

    // A reader as the first key would lock this tab out: asked first, in words, and Cancel keeps things as they are.
    await form.getByLabel("Name").fill("ci-reader");
    await form.getByLabel("Role").selectOption({ label: "reader" });
    await form.getByRole("button", { name: "Create key" }).click();
    await expect(form.getByRole("alert").textContent()).resolves.toMatch(/would lose access to this page/);
    await form.getByRole("button", { name: "Cancel" }).click();
    expect((await quarry.client.listApiKeys({})).apiKeys).toEqual([]);

    await form.getByRole("button", { name: "Create key" }).click();
    await form.getByRole("button", { name: "Create the reader key and lose access" }).click();
    const secret = page.getByTestId("new-secret");
    const value = (await secret.textContent())!;
    expect(value).toMatch(/^qk_/);
    // The secret stays in view: no key prompt covers it until the person is done.
    await tab.screenshot("api-key-secret");
    expect(await page.getByRole("form", { name: "API key", exact: true }).count()).toBe(0);
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(value);
    await tab.screenshot("api-key-secret");
    // Done: now the console asks for a key, as it said it would.
    tab.allow(/status of 401/);
    await page.getByRole("button", { name: "Done" }).click();
    await page.getByRole("form", { name: "API key", exact: true }).waitFor();
    noErrors();
  });
});
