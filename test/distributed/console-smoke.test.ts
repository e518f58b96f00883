// The console against the distributed gateway (six processes on OpenSearch, Kafka and Tika): the
// gateway process serves the built files on its own port, and the same screens work over it,
// WatchIngestion's and Chat's streams included. One pass through the UI; the embedded suite
// (test/console) covers each screen in depth.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { fixtureBytes } from "../fixtures/fixture-documents.ts";
import { COMPANY_FACT } from "../fixtures/fixture-texts.ts";
import { chromiumRequirement, ensureConsoleBuilt, launchChromium, watchedPage, type WatchedPage } from "../support/console-browser.ts";
import { startDistributedQuarry, type DistributedQuarry } from "../support/distributed-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { describeWithAllEngines } from "./engines-all.ts";

describeWithAllEngines("the console on the distributed gateway", (engines) => {
  describeWith(chromiumRequirement, "in Chromium", (executablePath) => {
    let quarry: DistributedQuarry;
    let browser: Browser;
    let tab: WatchedPage;

    beforeAll(async () => {
      ensureConsoleBuilt();
      quarry = await startDistributedQuarry(engines);
      browser = await launchChromium(executablePath);
      tab = await watchedPage(browser);
    });

    afterAll(async () => {
      await browser?.close();
      await quarry?.stop();
    });

    it("creates a knowledge base, ingests a file to ready, a chat citation opens its source and its neighbours, and the turn shows its provenance", async () => {
      const page = tab.page;
      await page.goto(quarry.url);
      await page.getByRole("button", { name: "New knowledge base" }).click();
      const form = page.getByRole("form", { name: "New knowledge base" });
      await form.getByLabel("Name").fill("smoke");
      await form.getByLabel("Name").press("Enter");
      await page.getByRole("article", { name: "smoke" }).getByRole("link", { name: "smoke" }).click();
      await page.getByLabel("Files to upload").setInputFiles({ name: "company.md", mimeType: "text/markdown", buffer: await fixtureBytes("company.md") });
      await expect.poll(() => page.locator('tr[data-status="ready"]').count(), { timeout: 150_000 }).toBe(1);
      await tab.screenshot("distributed-documents");

      await page.getByRole("link", { name: "Chat" }).click();
      // Pickers start empty (console-first-hour.browser.test.ts): choose the base.
      await page.getByRole("checkbox", { name: "smoke" }).check();
      await page.getByLabel("Question").fill(COMPANY_FACT.question);
      await page.getByLabel("Question").press("Enter");
      await page.locator(".answer-meta").waitFor({ timeout: 60_000 });
      await page.locator(".answer-text button.cite").first().click();
      const source = page.getByRole("complementary", { name: "Sources" }).locator("li.selected");
      await expect(source.textContent()).resolves.toContain("company.md");
      // The source expands to its chunk and neighbours (GetChunkNeighbours on OpenSearch) ...
      await source.getByRole("button", { name: "Show the whole chunk and its neighbours" }).click();
      await source.locator(".cited-chunk").waitFor();
      expect(await source.locator(".neighbour").count()).toBeGreaterThan(0);
      // ... and the turn's provenance comes back from the conversations index.
      await page.getByRole("button", { name: "Debug this turn" }).click();
      const provenance = page.getByRole("region", { name: "Provenance of turn 1" });
      await expect(provenance.getByTestId("retrieval-query").textContent()).resolves.toBe(COMPANY_FACT.question);
      expect(await provenance.getByLabel("candidates from smoke").locator("tbody tr").count()).toBeGreaterThan(0);
      await expect.poll(() => page.getByRole("navigation", { name: "Conversations" }).getByRole("listitem", { name: COMPANY_FACT.question }).count()).toBe(1);
      expect(tab.errors()).toEqual([]);
    }, 240_000);
  });
});
