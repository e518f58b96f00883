// Export and import in the console, in headless Chromium against an embedded Quarry: a base's card
// downloads its archive, and the import form makes a new base from that file, which then answers a
// search with the same chunk (docs/PORTABILITY.md); "with assistants" carries the assistant that
// mounts it, made again over the copy.
import { join } from "node:path";
import { tmpdir } from "node:os";
import { gunzipSync } from "node:zlib";
import { readFile, rm } from "node:fs/promises";
import { expect, it } from "vitest";
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { chromiumRequirement, consoleInChromium } from "../support/console-browser.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { lastUpdate, upload, watchAll } from "../e2e/e2e-helpers.ts";

const KB = "harbour";
const TEXT = "The ferry to the island leaves at nine from pier four and returns at five in the afternoon.";

describeWith(chromiumRequirement, "export and import in the console (embedded Quarry)", (executablePath) => {
  const ui = consoleInChromium(executablePath, () => startEmbeddedQuarry(), {
    prepare: async (quarry) => {
      await quarry.client.createKnowledgeBase({ name: KB });
      const id = (await upload(quarry.client, KB, "ferry.txt", new TextEncoder().encode(TEXT))).document!.id;
      expect(lastUpdate(await watchAll(quarry.client, [id]), id).status).toBe(DocumentStatus.READY);
      await quarry.client.createAssistant({ assistant: { name: "ferryman", systemPrompt: "Name the pier.", knowledgeBases: [{ knowledgeBase: KB }] } });
    },
    timeout: 180_000,
  });

  it("downloads a base's archive with its assistant from its card and imports it under a new name", async () => {
    const { quarry, page, tab } = ui;
    await page.goto(quarry.url);
    const card = page.getByRole("article", { name: KB });
    await card.getByLabel("with assistants").check();
    const [download] = await Promise.all([page.waitForEvent("download"), card.getByRole("button", { name: "Export" }).click()]);
    expect(download.suggestedFilename()).toBe(`${KB}.quarry.gz`);
    const file = join(tmpdir(), `quarry-console-export-${process.pid}.quarry.gz`);
    await download.saveAs(file);
    const text = gunzipSync(await readFile(file)).toString("utf8");
    expect(text).toContain(TEXT);
    expect(JSON.parse(text.split("\n")[0]).assistants[0].assistant).toMatchObject({ name: "ferryman", systemPrompt: "Name the pier." });

    await page.getByRole("button", { name: "Import" }).click();
    const form = page.getByRole("form", { name: "Import a knowledge base" });
    await form.getByLabel("Archive file").setInputFiles(file);
    await form.getByLabel("New name").fill("harbour-copy");
    await form.getByRole("button", { name: "Import" }).click();
    await page.getByRole("status").filter({ hasText: "Imported harbour-copy: 1 documents" }).filter({ hasText: "Assistants: ferryman (harbour-copy) (0 corrections)" }).waitFor();
    await page.getByRole("article", { name: "harbour-copy" }).waitFor();
    const { hits } = await quarry.client.search({ query: "ferry pier", knowledgeBases: ["harbour-copy"], settings: { mode: RetrievalMode.BM25, topK: 1 } });
    expect(hits[0]?.chunk?.text).toBe(TEXT);
    const copy = (await quarry.client.getAssistant({ assistant: "ferryman (harbour-copy)" })).assistant!;
    expect(copy.systemPrompt).toBe("Name the pier.");
    expect(copy.knowledgeBases.map((m) => m.knowledgeBase)).toEqual([(await quarry.client.getKnowledgeBase({ knowledgeBase: "harbour-copy" })).knowledgeBase!.id]);
    expect(tab.errors()).toEqual([]);
    await rm(file, { force: true });
  });
});
