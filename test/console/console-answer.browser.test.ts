// The console's answer-layer screens in headless Chromium against an embedded Quarry, through the
// UI only: assistants (create, edit, delete), chat through an assistant with conversations in a
// side list, a turn's provenance, and a cited chunk expanded to its neighbours. The knowledge bases
// are set up through the API (their screens have their own suite, console.browser.test.ts). Any
// console error fails the step.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { fixtureBytes, type FixtureName } from "../fixtures/fixture-documents.ts";
import { CHINESE_RULES_FACT, COMPANY_FACT } from "../fixtures/fixture-texts.ts";
import { chromiumRequirement, ensureConsoleBuilt, launchChromium, watchedPage, type WatchedPage } from "../support/console-browser.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { QueryRewriteMode } from "../../gen/quarry/common/v1/assistant_pb.ts";
import { RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";

const MIME: Record<string, string> = { ".md": "text/markdown", ".pdf": "application/pdf" };

async function ingest(quarry: EmbeddedQuarryFixture, knowledgeBase: string, files: FixtureName[]) {
  await quarry.client.createKnowledgeBase({ name: knowledgeBase, chunking: { chunkSize: 120, chunkOverlap: 0 } });
  for (const fileName of files) {
    const content = await fixtureBytes(fileName);
    await quarry.client.uploadDocument({ header: { knowledgeBase, fileName, mimeType: MIME[fileName.slice(fileName.lastIndexOf("."))] }, content });
  }
  // The ingestion stream ends once every watched document has settled.
  const settled = new Map<string, DocumentStatus>();
  for await (const event of quarry.client.watchIngestion({ knowledgeBase })) {
    settled.set(event.fileName, event.status);
    if (files.every((f) => settled.get(f) === DocumentStatus.READY || settled.get(f) === DocumentStatus.FAILED)) break;
  }
  expect([...settled.values()]).toEqual(files.map(() => DocumentStatus.READY));
}

describeWith(chromiumRequirement, "the console's assistants, conversations and provenance (embedded Quarry)", (executablePath) => {
  let quarry: EmbeddedQuarryFixture;
  let browser: Browser;
  let tab: WatchedPage;
  let page: Page;

  beforeAll(async () => {
    ensureConsoleBuilt();
    quarry = await startEmbeddedQuarry();
    await ingest(quarry, "handbook", ["company.md"]);
    await ingest(quarry, "rules 规则", ["rules-zh.md"]);
    browser = await launchChromium(executablePath);
    tab = await watchedPage(browser);
    page = tab.page;
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await quarry?.stop();
  });

  const noErrors = () => expect(tab.errors()).toEqual([]);

  it("creates an assistant with mounted bases, priorities and retrieval defaults; Enter submits", async () => {
    await page.goto(quarry.url);
    await page.getByRole("link", { name: "Assistants" }).click();
    await page.getByText("No assistants yet").waitFor();
    await page.getByRole("button", { name: "New assistant" }).click();
    const form = page.getByRole("form", { name: "New assistant" });
    // Focus order follows the form: name, description, prompt.
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest("label")?.textContent)).toMatch(/^Name/);
    await page.keyboard.type("helpdesk 助手");
    await page.keyboard.press("Tab");
    await page.keyboard.type("Answers staff questions about the company and the library");
    await page.keyboard.press("Tab");
    await page.keyboard.type("Answer briefly. 用中文回答中文问题。");
    await form.getByRole("checkbox", { name: "rules 规则" }).check();
    await form.getByLabel("rules 规则 priority").fill("2");
    await form.getByLabel("handbook top k").fill("3");
    await form.getByLabel(/^Mode/).selectOption({ label: "bm25" });
    await form.getByLabel("Score threshold").fill("0.05");
    await form.getByLabel("Query rewrite").selectOption({ label: "none" });
    await form.getByLabel("Hide file names from the model").check();
    await tab.screenshot("assistant-form");
    await form.getByLabel("Name", { exact: true }).press("Enter");

    const card = page.getByRole("article", { name: "helpdesk 助手" });
    await card.waitFor();
    // The base with the higher priority is listed first.
    await expect(card.getByRole("list", { name: "mounted knowledge bases" }).locator("li").allTextContents()).resolves.toEqual(["rules 规则top kpriority 2", "handbooktop 3priority 0"]);
    await expect(card.getByTestId("retrieval-defaults").textContent()).resolves.toBe("bm25 · 8 chunks · threshold 0.05 · none · file names hidden");

    const stored = (await quarry.client.getAssistant({ assistant: "helpdesk 助手" })).assistant!;
    const bases = (await quarry.client.listKnowledgeBases({})).knowledgeBases;
    const idOf = (name: string) => bases.find((b) => b.name === name)!.id;
    expect(stored.systemPrompt).toBe("Answer briefly. 用中文回答中文问题。");
    expect(stored.knowledgeBases.map((m) => [m.knowledgeBase, m.topK, m.priority])).toEqual([
      [idOf("handbook"), 3, 0],
      [idOf("rules 规则"), 0, 2],
    ]);
    expect(stored.retrieval).toMatchObject({ mode: RetrievalMode.BM25, minScore: 0.05, rewrite: QueryRewriteMode.NONE, rerank: false });
    expect(stored.hideFileNames).toBe(true);
    noErrors();
  });

  it("edits an assistant in place and deletes another after its confirmation", async () => {
    const card = page.getByRole("article", { name: "helpdesk 助手" });
    await card.getByRole("button", { name: "Edit" }).click();
    const form = page.getByRole("form", { name: "Edit helpdesk 助手" });
    await expect(form.getByLabel("System prompt").inputValue()).resolves.toBe("Answer briefly. 用中文回答中文问题。");
    await form.getByLabel("System prompt").fill("Answer in one sentence.");
    await form.getByRole("checkbox", { name: "rules 规则" }).uncheck();
    await form.getByLabel(/^Mode/).selectOption({ label: "hybrid" });
    await form.getByLabel("Hide file names from the model").uncheck();
    await form.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => card.getByTestId("retrieval-defaults").textContent()).toBe("hybrid · 8 chunks · threshold 0.05 · none");
    await expect(card.getByRole("list", { name: "mounted knowledge bases" }).locator("li").allTextContents()).resolves.toEqual(["handbooktop 3priority 0"]);
    const stored = (await quarry.client.getAssistant({ assistant: "helpdesk 助手" })).assistant!;
    expect(stored.systemPrompt).toBe("Answer in one sentence.");
    expect(stored.knowledgeBases).toHaveLength(1);
    expect(stored.hideFileNames).toBe(false);

    // A second one, mounting the Chinese rules, to delete (and to chat with later).
    await page.getByRole("button", { name: "New assistant" }).click();
    const create = page.getByRole("form", { name: "New assistant" });
    await create.getByLabel("Name", { exact: true }).fill("scratch");
    await create.getByRole("checkbox", { name: "handbook" }).uncheck();
    expect(await create.getByRole("button", { name: "Create" }).isDisabled()).toBe(true);
    await create.getByRole("checkbox", { name: "rules 规则" }).check();
    await create.getByRole("button", { name: "Create" }).click();
    const scratch = page.getByRole("article", { name: "scratch" });
    await scratch.waitFor();
    await tab.screenshot("assistants");
    await page.setViewportSize({ width: 420, height: 900 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await tab.screenshot("assistants-narrow");
    await page.setViewportSize({ width: 1366, height: 860 });

    await scratch.getByRole("button", { name: "Delete" }).click();
    await scratch.getByRole("button", { name: "Delete scratch" }).click();
    await expect.poll(() => scratch.count()).toBe(0);
    expect((await quarry.client.listAssistants({})).assistants.map((a) => a.name)).toEqual(["helpdesk 助手"]);
    noErrors();
  });
});
