// The console's answer-layer screens in headless Chromium against an embedded Quarry, through the
// UI only: assistants (create, edit, delete), chat through an assistant with conversations in a
// side list, a turn's provenance, and a cited chunk expanded to its neighbours. The knowledge bases
// are set up through the API (their screens have their own suite, console.browser.test.ts). Any
// console error fails the step.
import { expect, it } from "vitest";
import { fixtureBytes, type FixtureName } from "../fixtures/fixture-documents.ts";
import { CHINESE_RULES_FACT, COMPANY_FACT } from "../fixtures/fixture-texts.ts";
import { chromiumRequirement, consoleInChromium } from "../support/console-browser.ts";
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
  const ui = consoleInChromium(executablePath, () => startEmbeddedQuarry(), {
    prepare: async (quarry) => {
      await ingest(quarry, "handbook", ["company.md"]);
      await ingest(quarry, "rules 规则", ["rules-zh.md"]);
    },
    timeout: 240_000,
  });
  const noErrors = () => expect(ui.tab.errors()).toEqual([]);

  it("creates an assistant with mounted bases, priorities and retrieval defaults; Enter submits", async () => {
    const { quarry, tab, page } = ui;
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
    await form.getByRole("checkbox", { name: "handbook" }).check();
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
    const { quarry, tab, page } = ui;
    const card = page.getByRole("article", { name: "helpdesk 助手" });
    await card.getByRole("button", { name: "Edit" }).click();
    const form = page.getByRole("form", { name: "Edit helpdesk 助手" });
    await expect(form.getByLabel("System prompt").inputValue()).resolves.toBe("Answer briefly. 用中文回答中文问题。");
    await form.getByLabel("System prompt").fill("Answer in one sentence.");
    await form.getByRole("checkbox", { name: "rules 规则" }).uncheck();
    await form.getByLabel(/^Mode/).selectOption({ label: "hybrid" });
    await form.getByLabel("Score threshold").fill("0");
    await form.getByLabel("Hide file names from the model").uncheck();
    await form.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => card.getByTestId("retrieval-defaults").textContent()).toBe("hybrid · 8 chunks · threshold 0.00 · none");
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

  it("chats through an assistant, continues the conversation, starts another over chosen bases and reopens the first", async () => {
    const { quarry, tab, page } = ui;
    await page.getByRole("link", { name: "Assistants" }).click();
    await page.getByRole("article", { name: "helpdesk 助手" }).getByRole("link", { name: "Chat" }).click();
    await expect.poll(() => page.getByLabel("Answer with").inputValue()).toBe("helpdesk 助手");
    const question = page.getByLabel("Question");
    await question.fill(COMPANY_FACT.question);
    await question.press("Enter");
    const turns = page.locator(".turn");
    await turns.nth(0).locator(".answer-meta").waitFor({ timeout: 60_000 });
    await expect(turns.nth(0).locator(".answer-text").textContent()).resolves.toContain(COMPANY_FACT.word);
    const list = page.getByRole("navigation", { name: "Conversations" });
    const first = list.getByRole("listitem", { name: COMPANY_FACT.question });
    await expect.poll(() => first.textContent()).toContain("helpdesk 助手 · 1 turn");

    // A follow-up continues the same conversation (no chat model: searched with the previous question's words).
    await expect.poll(() => page.locator(".continuing").textContent()).toContain("helpdesk 助手");
    await question.fill("When was Tallis founded, and by whom?");
    await question.press("Enter");
    await turns.nth(1).locator(".answer-meta").waitFor({ timeout: 60_000 });
    await expect(turns.nth(1).locator(".answer-text").textContent()).resolves.toContain("1894");
    await expect.poll(() => first.textContent()).toContain("2 turns");
    const held = (await quarry.client.listConversations({})).conversations;
    expect(held.map((c) => c.turnCount)).toEqual([2]);

    // A new conversation over a chosen base, in Chinese.
    await list.getByRole("button", { name: "New conversation" }).click();
    await page.getByLabel("Answer with").selectOption({ label: "knowledge bases I choose" });
    await page.getByRole("checkbox", { name: "rules 规则" }).check();
    await page.getByRole("checkbox", { name: "handbook" }).uncheck();
    await question.fill(CHINESE_RULES_FACT.question);
    await question.press("Enter");
    await turns.nth(0).locator(".answer-meta").waitFor({ timeout: 60_000 });
    await expect(turns.nth(0).locator(".answer-text").textContent()).resolves.toContain(CHINESE_RULES_FACT.phrase);
    const second = list.getByRole("listitem", { name: CHINESE_RULES_FACT.question });
    await expect.poll(() => second.textContent()).toContain("rules 规则 · 1 turn");
    await tab.screenshot("chat-conversations");

    // Reopen the first: both turns come back from the store, with their citations.
    await first.getByRole("button", { name: new RegExp(COMPANY_FACT.question.replace("?", "\\?")) }).click();
    await expect.poll(() => turns.count()).toBe(2);
    await expect(turns.nth(1).locator(".question").textContent()).resolves.toBe("When was Tallis founded, and by whom?");
    expect(await turns.nth(0).locator(".answer-text button.cite").count()).toBeGreaterThan(0);
    await turns.nth(0).locator(".answer-text button.cite").first().click();
    const source = page.getByRole("complementary", { name: "Sources" }).locator("li.selected");
    await expect(source.textContent()).resolves.toContain("company.md");

    // The source expands to its whole chunk between its neighbours, and further on request.
    await source.getByRole("button", { name: "Show the whole chunk and its neighbours" }).click();
    const cited = source.locator(".cited-chunk");
    await cited.waitFor();
    await expect(cited.textContent()).resolves.toContain(COMPANY_FACT.phrase);
    const at = Number(await cited.getAttribute("data-index"));
    const indexes = async () => (await source.locator("[data-index]").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-index")))));
    await expect.poll(indexes).toEqual([at - 1, at, at + 1].filter((i) => i >= 0));
    await source.getByRole("button", { name: "More context" }).click();
    await expect.poll(indexes).toEqual([at - 2, at - 1, at, at + 1, at + 2].filter((i) => i >= 0));
    const neighbour = await source.locator(".neighbour").last().textContent();
    expect(neighbour!.length).toBeGreaterThan(20);
    expect(neighbour).not.toBe(await cited.textContent());
    await tab.screenshot("chat-source-expanded");

    // Delete the Chinese one, after its confirmation.
    await second.getByRole("button", { name: "Delete" }).click();
    await second.getByRole("button", { name: "Delete conversation" }).click();
    await expect.poll(() => second.count()).toBe(0);
    expect((await quarry.client.listConversations({})).conversations).toHaveLength(1);
    noErrors();
  }, 180_000);

  it("debugs a turn: the searched query, settings, each list's candidates, fusion, context and timings; DebugRetrieval with an expected text", async () => {
    const { tab, page } = ui;
    const turn = page.locator(".turn").nth(1);
    await turn.getByRole("button", { name: "Debug this turn" }).click();
    const panel = page.getByRole("region", { name: "Provenance of turn 2" });
    await panel.waitFor();
    await expect(panel.getByTestId("retrieval-query").textContent()).resolves.toBe("instruments headquartered When was Tallis founded, and by whom?");
    await expect(panel.textContent()).resolves.toContain("with the previous question's words (no chat model)");
    await expect(panel.getByTestId("answered").textContent()).resolves.toMatch(/^yes — the best document holds/);
    await expect(panel.getByTestId("settings").textContent()).resolves.toMatch(/^hybrid · top k 8 · min score 0\.00 · rerank off/);
    const candidates = panel.getByLabel("candidates from handbook");
    expect(await candidates.locator("tbody tr").count()).toBeGreaterThan(0);
    await expect(candidates.locator("tbody tr").first().textContent()).resolves.toMatch(/^1company\.md[\d.]+#\d+ · [\d.]+/);
    const fused = panel.getByRole("table", { name: "fused ranking" });
    await expect(fused.locator("tbody tr").first().textContent()).resolves.toMatch(/^1company\.mdhandbook1[\d.]+\[1\]$/);
    expect(await panel.getByRole("list", { name: "context" }).locator("li").count()).toBeGreaterThan(0);
    const timings = await panel.getByLabel("timings").locator(".stage").allTextContents();
    expect(timings).toContain("retrieve");
    await panel.evaluate((el) => el.scrollIntoView({ block: "start" }));
    await tab.screenshot("turn-provenance", { fullPage: false });

    // The debugger reruns the turn's retrieval for an expected text: found in context, then absent.
    const debug = panel.getByRole("form", { name: "Debug retrieval" });
    await debug.getByLabel("Expected text").fill("founded in 1894 by Margaret Tallis");
    await debug.getByLabel("Expected text").press("Enter");
    const report = panel.getByRole("status", { name: "debug report" });
    await expect.poll(() => report.getAttribute("data-loss"), { timeout: 30_000 }).toBe("NONE");
    await expect(report.locator(".verdict").textContent()).resolves.toMatch(/^reached the context/);
    const trace = report.locator(".trace").first();
    await expect(trace.textContent()).resolves.toMatch(/company\.md · chunk \d+ · reached the context · context \[\d+\]/);
    expect(await trace.locator(".positions li").count()).toBeGreaterThan(0);
    await report.evaluate((el) => el.scrollIntoView({ block: "center" }));
    await tab.screenshot("turn-debugger", { fullPage: false });
    await debug.getByLabel("Expected text").fill("racing bicycles for the moon");
    await debug.getByRole("button", { name: "Rerun retrieval" }).click();
    await expect.poll(() => report.getAttribute("data-loss"), { timeout: 30_000 }).toBe("NOT_IN_KNOWLEDGE_BASE");
    expect(await report.locator(".trace").count()).toBe(0);
    await page.setViewportSize({ width: 420, height: 900 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await tab.screenshot("chat-conversations-narrow");
    await page.setViewportSize({ width: 1366, height: 860 });
    noErrors();
  });

  it("corrects an answer: the correction is ingested and wins on the next ask; deleting it from the assistant's list undoes that", async () => {
    const { quarry, tab, page } = ui;
    const CORRECTED = "Tallis Instruments moved its headquarters to Norwich, Norfolk, in 2025.";
    const turns = page.locator(".turn");
    await turns.nth(0).getByRole("button", { name: "Correct this answer" }).click();
    const form = page.getByRole("form", { name: "Correct this answer" });
    await expect(form.getByLabel("The question it answers").inputValue()).resolves.toBe(COMPANY_FACT.question);
    await form.getByLabel("Corrected answer").fill(CORRECTED);
    await form.getByRole("button", { name: "Publish correction" }).click();
    const published = page.getByRole("status", { name: "correction" });
    await expect.poll(() => published.getAttribute("data-status"), { timeout: 120_000 }).toBe("ready");
    await expect(published.textContent()).resolves.toContain("the next matching question is answered from it");
    await published.evaluate((el) => el.scrollIntoView({ block: "center" }));
    await tab.screenshot("correction-published", { fullPage: false });

    // A new conversation with the assistant: the same question is answered from the correction.
    const list = page.getByRole("navigation", { name: "Conversations" });
    await list.getByRole("button", { name: "New conversation" }).click();
    await expect.poll(() => page.getByLabel("Answer with").inputValue()).toBe("helpdesk 助手");
    await page.getByLabel("Question").fill(COMPANY_FACT.question);
    await page.getByLabel("Question").press("Enter");
    await turns.nth(0).locator(".answer-meta").waitFor({ timeout: 60_000 });
    await expect(turns.nth(0).locator(".answer-text").textContent()).resolves.toContain("Norwich");
    await tab.screenshot("chat-corrected");
    // The turn's provenance says so: the corrections list, its question match, the correction first.
    await turns.nth(0).getByRole("button", { name: "Debug this turn" }).click();
    const provenance = page.getByRole("region", { name: "Provenance of turn 1" });
    await expect(provenance.getByTestId("corrections-used").textContent()).resolves.toMatch(/answered from 1 managed correction/);
    await expect(provenance.getByTestId("correction-match").first().textContent()).resolves.toMatch(/^matches \(/);
    await expect(provenance.getByRole("table", { name: "fused ranking" }).locator("tbody tr").first().textContent()).resolves.toContain("correction · [1]");
    const held = (await quarry.client.listConversations({})).conversations;
    expect(held).toHaveLength(2);

    // The assistant's corrections list shows it; deleting it puts the documents back in charge.
    await page.getByRole("link", { name: "Assistants" }).click();
    const card = page.getByRole("article", { name: "helpdesk 助手" });
    await card.getByRole("button", { name: "Corrections" }).click();
    const item = card.getByRole("region", { name: /^corrections of / }).getByRole("listitem");
    await expect.poll(() => item.count()).toBe(1);
    await expect(item.textContent()).resolves.toContain(CORRECTED);
    await expect(item.textContent()).resolves.toMatch(/ready/);
    await tab.screenshot("assistant-corrections");
    // The corrections base is the assistant's, not offered for mounting by hand.
    await card.getByRole("button", { name: "Edit" }).click();
    const edit = page.getByRole("form", { name: "Edit helpdesk 助手" });
    expect(await edit.locator(".mount-row").count()).toBe(2);
    await edit.getByRole("button", { name: "Cancel" }).click();
    await card.getByRole("button", { name: "Corrections" }).click();
    await item.getByRole("button", { name: "Delete" }).click();
    await item.getByRole("button", { name: "Delete correction" }).click();
    await expect.poll(() => item.count()).toBe(0);

    await card.getByRole("link", { name: "Chat" }).click();
    await expect.poll(() => page.getByLabel("Answer with").inputValue()).toBe("helpdesk 助手");
    await page.getByLabel("Question").fill(COMPANY_FACT.question);
    await page.getByLabel("Question").press("Enter");
    await turns.nth(0).locator(".answer-meta").waitFor({ timeout: 60_000 });
    const again = await turns.nth(0).locator(".answer-text").textContent();
    expect(again).toContain(COMPANY_FACT.word);
    expect(again).not.toContain("Norwich");
    noErrors();
  }, 240_000);

  it("edits a knowledge base (description, chunking, name) and re-ingests a document, then the whole base, with the new chunking", async () => {
    const { quarry, tab, page } = ui;
    await page.getByRole("link", { name: "Knowledge bases" }).first().click();
    const card = page.getByRole("article", { name: "handbook" });
    await card.getByRole("button", { name: "Edit" }).click();
    const form = page.getByRole("form", { name: "Edit handbook" });
    await form.getByLabel("Description").fill("Company facts 公司资料");
    await form.getByLabel("Chunk size (tokens)").fill("60");
    await form.getByText("re-ingest the documents to re-chunk them").waitFor();
    await tab.screenshot("knowledge-base-edit");
    await form.getByLabel("Description").press("Enter");
    await expect.poll(() => card.textContent()).toContain("chunks of 60 tokens, 0 overlap");
    await expect(card.textContent()).resolves.toContain("Company facts 公司资料");
    const stored = (await quarry.client.getKnowledgeBase({ knowledgeBase: "handbook" })).knowledgeBase!;
    expect(stored.chunking).toMatchObject({ chunkSize: 60, chunkOverlap: 0 });

    // The document keeps its 120-token chunks until it is re-ingested.
    await card.getByRole("link", { name: "handbook" }).click();
    const row = page.getByRole("row", { name: "company.md" });
    const chunks = async () => Number(await row.locator("td.num").nth(1).textContent());
    const before = await chunks();
    await page.evaluate(() => {
      const seen: string[] = ((window as unknown as { seen: string[] }).seen = []);
      new MutationObserver(() => {
        const s = document.querySelector('tr[aria-label="company.md"]')?.getAttribute("data-status") ?? "";
        if (seen.at(-1) !== s) seen.push(s);
      }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-status"] });
    });
    await row.getByRole("button", { name: "Re-ingest" }).click();
    await expect.poll(chunks, { timeout: 120_000 }).toBeGreaterThan(before);
    await expect.poll(() => row.getAttribute("data-status")).toBe("ready");
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    expect(seen.some((s) => s !== "ready"), seen.join(" → ")).toBe(true);
    await tab.screenshot("documents-reingested");
    const after = await chunks();

    // The whole base again: same settings, so the same chunk count, and every document ready.
    // The row is ready before the click too: wait until it has left ready and come back (the
    // observer above records each status) before counting, or the count can be read mid-way.
    await page.evaluate(() => {
      (window as unknown as { seen: string[] }).seen.length = 0;
    });
    await page.getByRole("button", { name: "Re-ingest all" }).click();
    const reingested = () =>
      page.evaluate(() => {
        const seen = (window as unknown as { seen: string[] }).seen;
        return seen.some((s) => s !== "ready") && seen.at(-1) === "ready";
      });
    await expect.poll(reingested, { timeout: 120_000 }).toBe(true);
    await expect.poll(() => page.locator('tr[data-status="ready"]').count()).toBe(1);
    await expect.poll(chunks).toBe(after);

    // Rename it: the card and the API follow.
    await page.getByRole("link", { name: "Knowledge bases" }).first().click();
    await card.getByRole("button", { name: "Edit" }).click();
    await form.getByLabel("Name", { exact: true }).fill("handbook 手册");
    await form.getByRole("button", { name: "Save" }).click();
    await page.getByRole("article", { name: "handbook 手册" }).waitFor();
    expect((await quarry.client.listKnowledgeBases({})).knowledgeBases.map((b) => b.name)).toContain("handbook 手册");
    noErrors();
  }, 240_000);

  it("says plainly when the knowledge bases do not answer a question, and labels the passages it lists as the closest, not an answer", async () => {
    const { quarry, tab, page } = ui;
    await page.goto(quarry.url);
    await page.getByRole("link", { name: "Chat" }).first().click();
    // A fresh chat screen starts a new conversation (its "New conversation" button is disabled);
    // with assistants about, it offers them first.
    await page.getByRole("checkbox", { name: /^handbook/ }).or(page.getByLabel("Answer with")).first().waitFor();
    if (await page.getByLabel("Answer with").count()) await page.getByLabel("Answer with").selectOption({ label: "knowledge bases I choose" });
    await page.getByRole("checkbox", { name: /^handbook/ }).check();
    await page.getByLabel("Question").fill("How long should green tea steep on a submarine?");
    await page.getByLabel("Question").press("Enter");
    const turn = page.locator(".turn").nth(0);
    await turn.locator(".answer-meta").waitFor({ timeout: 60_000 });
    await expect(turn.getByTestId("abstained").textContent()).resolves.toMatch(/^The selected knowledge bases do not answer this\. The passages listed are the closest, not an answer \(the best document holds 0\.\d\d of the question's weighted content words/);
    await expect(turn.locator(".answer-text").textContent()).resolves.toMatch(/^The selected knowledge bases do not answer this question\.\s+Closest passages, not an answer: \d/);
    const sources = page.getByRole("complementary", { name: "Sources" });
    await expect(sources.getByRole("heading").textContent()).resolves.toBe("Closest passages — not an answer");
    const labels = await sources.locator(".closest-label").allTextContents();
    expect(labels.length).toBeGreaterThan(0);
    expect(labels.every((l) => l === "closest, not an answer")).toBe(true);
    await tab.screenshot("chat-abstained");

    // The same base answers a question it covers, with its sources as sources.
    await page.getByLabel("Question").fill(COMPANY_FACT.question);
    await page.getByLabel("Question").press("Enter");
    await page.locator(".turn").nth(1).locator(".answer-meta").waitFor({ timeout: 60_000 });
    expect(await page.locator(".turn").nth(1).getByTestId("abstained").count()).toBe(0);
    await expect(sources.getByRole("heading").textContent()).resolves.toBe("Sources");
    noErrors();
  }, 120_000);
});
