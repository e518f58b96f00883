// The retrieval test's score colours, in headless Chromium against an embedded Quarry: a vector
// score is banded by the base's model's recorded score distribution (not a fixed 0.8/0.6), a legend
// says what each colour means for that model, and the question's stop words are not highlighted.
import { expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { catalogModel, DEFAULT_MODEL } from "../../lib/models/model-catalog.ts";
import { chromiumRequirement, consoleInChromium } from "../support/console-browser.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { lastUpdate, upload, watchAll } from "../e2e/e2e-helpers.ts";

const KB = "tea-notes";
const TEXT = "Green tea is picked in spring on the slopes of Yunnan; the first flush of leaves is steamed and rolled by hand.";

describeWith(chromiumRequirement, "vector score bands in the retrieval test (embedded Quarry)", (executablePath) => {
  const ui = consoleInChromium(executablePath, () => startEmbeddedQuarry(), {
    prepare: async (quarry) => {
      await quarry.client.createKnowledgeBase({ name: KB });
      const id = (await upload(quarry.client, KB, "tea.txt", new TextEncoder().encode(TEXT))).document!.id;
      expect(lastUpdate(await watchAll(quarry.client, [id]), id).status).toBe(DocumentStatus.READY);
    },
    timeout: 180_000,
  });

  it("colours the vector score by the model's recorded bands, explains them in a legend, and marks no stop word", async () => {
    const { quarry, page, tab } = ui;
    const recorded = catalogModel(DEFAULT_MODEL).scores!;
    await page.goto(quarry.url);
    await page.getByRole("link", { name: "Retrieval test" }).click();
    const form = page.getByRole("form", { name: "Retrieval test" });
    await form.getByRole("checkbox", { name: KB }).check();
    await form.getByLabel("Query").fill("When is the tea of Yunnan picked?");
    await form.getByRole("button", { name: "Search" }).click();

    const legend = page.getByLabel("vector score colours");
    await legend.getByText(DEFAULT_MODEL).waitFor();
    const legendText = await legend.textContent();
    expect(legendText).toContain(`≥ ${recorded.relevant.p50.toFixed(3)} typical of a relevant passage`);
    expect(legendText).toContain(`≥ ${recorded.bestIrrelevant.p50.toFixed(3)} weak`);
    expect(legendText).toContain(`< ${recorded.bestIrrelevant.p50.toFixed(3)} below`);
    expect(legendText).toContain("scifact, arguana-public");

    const first = page.getByRole("article", { name: "result 1", exact: true });
    const explain = (await first.getByLabel("explain").textContent())!;
    const similarity = Number(/vector#\d+ · ([\d.]+)/.exec(explain)?.[1]);
    expect(similarity, explain).toBeGreaterThan(0);
    const band = similarity >= recorded.relevant.p50 ? "high" : similarity >= recorded.bestIrrelevant.p50 ? "mid" : "low";
    expect(await first.locator(".hit-head .score").getAttribute("data-band")).toBe(band);

    await first.locator("mark", { hasText: /^yunnan$/i }).first().waitFor();
    expect(await first.locator("mark", { hasText: /^(is|the|of|when)$/i }).count()).toBe(0);
    expect(tab.errors()).toEqual([]);
  });
});
