// The System page in headless Chromium against an embedded Quarry: an embedding endpoint answering
// 503 dead-letters a document at the embedder; the page shows every service serving, the stage's
// failures and the dead letter with its reason, and its Re-drive (confirmed) brings the document to
// READY once the endpoint is back, after which the page's refresh shows no dead letters.
import { expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { startOpenAiStub } from "../../lib/testing/openai-stub.ts";
import { chromiumRequirement, consoleInChromium } from "../support/console-browser.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { upload } from "../e2e/e2e-helpers.ts";

describeWith(chromiumRequirement, "the System page (embedded Quarry)", (executablePath) => {
  let endpointDown = false;
  let documentId = "";
  const ui = consoleInChromium(
    executablePath,
    async (): Promise<EmbeddedQuarryFixture> => {
      const stub = await startOpenAiStub({
        embeddingDimension: 32,
        fail: (request) => (endpointDown && request.path === "/v1/embeddings" ? { status: 503, message: "the embedding endpoint is down for maintenance" } : undefined),
      });
      const quarry = await startEmbeddedQuarry({
        env: { QUARRY_EMBEDDING_PROVIDER: "openai", QUARRY_EMBEDDING_BASE_URL: stub.url, QUARRY_EMBEDDING_MODEL: "stub-embedding", QUARRY_EMBEDDING_DIMENSION: "32", QUARRY_MAX_REDRIVES: "0" },
      });
      return { ...quarry, stop: async (options) => (await quarry.stop(options), await stub.close()) };
    },
    {
      prepare: async (quarry) => {
        await quarry.client.createKnowledgeBase({ name: "canals" });
        endpointDown = true;
        documentId = (await upload(quarry.client, "canals", "locks.txt", new TextEncoder().encode("Close the lower gates before opening the top paddles."))).document!.id;
      },
      timeout: 240_000,
    },
  );

  it("shows health, the stage's failures and the dead letter, and re-drives it after a confirmation", async () => {
    const { quarry, page, tab } = ui;
    await expect
      .poll(async () => (await quarry.client.getSystemStatus({})).deadLetters.some((d) => d.documentId === documentId), { timeout: 90_000, interval: 250 })
      .toBe(true);
    await page.goto(quarry.url);
    await page.getByRole("navigation", { name: "Screens" }).getByRole("link", { name: "System" }).click();
    const services = page.getByRole("table", { name: "Services" });
    for (const name of ["gateway", "parser", "chunker", "embedder", "index", "answer"]) {
      await services.getByRole("row", { name }).getByRole("cell", { name: "serving", exact: true }).waitFor();
    }
    await page.getByRole("table", { name: "Stages" }).getByRole("row", { name: "embedder" }).getByText(/^unavailable \d+$/).waitFor();
    const letter = page.getByRole("table", { name: "Dead letters" }).getByRole("row", { name: "locks.txt" });
    await letter.getByText(/the embedding endpoint is down for maintenance/).waitFor();
    await letter.getByRole("cell", { name: "embedder", exact: true }).waitFor();

    endpointDown = false;
    await letter.getByRole("button", { name: "Re-drive" }).click();
    await letter.getByRole("button", { name: "Re-drive locks.txt" }).click();
    await page.getByRole("status").filter({ hasText: "Re-driven: locks.txt." }).waitFor();
    // The page refreshes itself: once the document has ingested, its dead letter is gone.
    await page.getByText("No dead letters.").waitFor({ timeout: 90_000 });
    expect((await quarry.client.getDocument({ documentId })).document!.status).toBe(DocumentStatus.READY);
    expect(tab.errors()).toEqual([]);
  }, 180_000);
});
