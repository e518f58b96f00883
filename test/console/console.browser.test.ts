// The console in headless Chromium against an embedded Quarry, through the UI only: create a
// knowledge base, upload generated fixtures (picker and drag-and-drop), watch them reach ready (or
// fail with a reason), preview chunks, run a retrieval test, chat and open a citation's source,
// then turn keys on and log in with one. Any console error the step did not expect fails it. A
// second suite does the same with real documents from ../shared/corpus/docs when they are there; a
// third chats with a language model (the OpenAI stub) to see its answer stream and a false citation marked.
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { fixtureBytes, type FixtureName } from "../fixtures/fixture-documents.ts";
import { CHINESE_RULES_FACT, COMPANY_FACT } from "../fixtures/fixture-texts.ts";
import { chromiumRequirement, consoleInChromium, watchedPage } from "../support/console-browser.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { checkRequirement, describeWith } from "../support/engines.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { DocumentVectorMode, ParentMode, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { describeWithShared } from "../support/shared-material.ts";

const KB = "handbook";
// Three sections of some 130 words each: one chunk apiece at the base's 200 tokens.
const logSection = (heading: string, lead: string, topic: string) =>
  `## ${heading}\n\n${lead} ${Array.from({ length: 8 }, (_, i) => `Entry ${i + 1} about the ${topic} was written in the ledger with care and signed by the duty keeper.`).join(" ")}`;
const STATION_LOG = [
  "# Station log",
  logSection("Weather", "The keeper logged a north-westerly gale at dawn.", "weather"),
  logSection("Ships", "The schooner Marigold cleared the reef at noon.", "shipping"),
  logSection("Lamp", "The lamp room was swept and the paraffin reservoir filled.", "lamp"),
].join("\n\n");
const FIXTURES: FixtureName[] = ["company.md", "lighthouses.pdf", "rules-zh.md", "customers.csv", "scanned.pdf"];
const MIME: Record<string, string> = { ".md": "text/markdown", ".pdf": "application/pdf", ".csv": "text/csv", ".txt": "text/plain" };
const mimeOf = (name: string) => MIME[name.slice(name.lastIndexOf("."))] ?? "application/octet-stream";

async function filePayload(name: FixtureName) {
  return { name, mimeType: mimeOf(name), buffer: await fixtureBytes(name) };
}

describeWith(chromiumRequirement, "the console in Chromium (embedded Quarry)", (executablePath) => {
  const ui = consoleInChromium(executablePath, () => startEmbeddedQuarry());
  const noErrors = () => expect(ui.tab.errors()).toEqual([]);

  it("opens on the knowledge bases and creates one with a model from the catalog", async () => {
    const { quarry, page } = ui;
    await page.goto(quarry.url);
    await page.getByRole("heading", { name: "Knowledge bases" }).waitFor();
    await page.getByText("No knowledge bases yet").waitFor();
    await page.getByRole("button", { name: "New knowledge base" }).click();
    const form = page.getByRole("form", { name: "New knowledge base" });
    await form.getByLabel("Name").fill(KB);
    await form.getByLabel("Description").fill("Company facts, lighthouse pages and the library's 借阅规则");
    await expect.poll(() => form.getByLabel("Embedding model").locator("option").count()).toBe(3);
    await form.getByLabel("Chunk size (tokens)").fill("200");
    await form.getByLabel("Chunk overlap (tokens)").fill("20");
    await form.getByRole("button", { name: "Create" }).click();
    const card = page.getByRole("article", { name: KB });
    await card.waitFor();
    await expect(card.textContent()).resolves.toContain("all-MiniLM-L6-v2-int8");
    await expect(card.textContent()).resolves.toContain("chunks of 200 tokens, 20 overlap");
    // Left unchosen: no parents, and a new base's documents get whole vectors (the default is auto).
    await expect(card.getByTestId("levels").textContent()).resolves.toBe("no parents · document vectors");
    noErrors();
  });

  it("creates a base whose chunks are read with their sections and that keeps chunk vectors only", async () => {
    const { quarry, page } = ui;
    await page.getByRole("button", { name: "New knowledge base" }).click();
    const form = page.getByRole("form", { name: "New knowledge base" });
    await form.getByLabel("Name").fill("sectioned");
    await form.getByLabel("Parents").selectOption({ label: "section" });
    await form.getByLabel("Document vectors").selectOption({ label: "off: chunk vectors only" });
    await form.getByRole("button", { name: "Create" }).click();
    const card = page.getByRole("article", { name: "sectioned" });
    await expect.poll(() => card.getByTestId("levels").textContent()).toBe("parents: sections · chunk vectors only");
    const stored = (await quarry.client.getKnowledgeBase({ knowledgeBase: "sectioned" })).knowledgeBase!;
    expect(stored.chunking).toMatchObject({ parent: ParentMode.SECTION, documentVector: DocumentVectorMode.OFF });
    noErrors();
  });

  it("uploads many files by picker and one by drag-and-drop, and follows each to ready or its failure", async () => {
    const { quarry, tab, page } = ui;
    await page.getByRole("article", { name: KB }).getByRole("link", { name: KB }).click();
    await page.getByRole("heading", { name: KB }).waitFor();
    // Every status a row shows, in order, from the first upload on: proof the bars move live.
    await page.evaluate(() => {
      const seen: string[] = ((window as unknown as { seenStatuses: string[] }).seenStatuses = []);
      new MutationObserver(() => {
        for (const row of document.querySelectorAll("tr[data-status]")) {
          const s = `${row.getAttribute("aria-label")}:${row.getAttribute("data-status")}`;
          if (seen.at(-1) !== s && !seen.includes(s)) seen.push(s);
        }
      }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-status"] });
    });
    // The picker and its hint offer what this Quarry's parser reads (ListReadableFormats): Office files
    // by the built-ins, and no Tika here, so no RTF.
    const hint = page.getByTestId("readable-formats");
    await expect.poll(() => hint.textContent()).toMatch(/^Quarry reads: PDF document \(\.pdf\), .*SVG drawing \(\.svg\), .*plain text \(\.txt, \.text, \.log\)/);
    await expect(hint.textContent()).resolves.toMatch(/Word document \(\.docx.*Excel spreadsheet \(\.xlsx/);
    await expect(hint.textContent()).resolves.not.toMatch(/RTF/);
    const accept = (await page.getByLabel("Files to upload").getAttribute("accept")) ?? "";
    expect(accept.split(",")).toEqual(expect.arrayContaining([".pdf", ".md", ".svg", "image/svg+xml"]));
    expect(accept.split(",")).toContain(".docx");
    expect(accept).not.toContain(".rtf");
    await page.getByLabel("Files to upload").setInputFiles(await Promise.all(FIXTURES.map(filePayload)));

    const prose = await fixtureBytes("prose.txt");
    await page.getByTestId("dropzone").evaluate((zone, bytes) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([new Uint8Array(bytes)], "prose.txt", { type: "text/plain" }));
      zone.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, [...prose]);

    const rows = page.locator("tr[data-status]");
    await expect.poll(() => rows.count(), { timeout: 60_000 }).toBe(FIXTURES.length + 1);
    await tab.screenshot("documents-ingesting");
    await expect.poll(() => page.locator('tr[data-status="ready"]').count(), { timeout: 180_000 }).toBe(FIXTURES.length);
    const failed = page.locator('tr[data-status="failed"]');
    await expect.poll(() => failed.count()).toBe(1);
    await expect(failed.getAttribute("aria-label")).resolves.toBe("scanned.pdf");
    await expect(failed.textContent()).resolves.toMatch(/has no text layer/);

    const seen = await page.evaluate(() => (window as unknown as { seenStatuses: string[] }).seenStatuses);
    // Each document was seen in the pipeline before it settled, without reloading the page.
    for (const name of ["company.md", "prose.txt"]) {
      const mine = seen.filter((s) => s.startsWith(`${name}:`)).map((s) => s.slice(name.length + 1));
      expect(mine.at(-1), `${name}: ${mine.join(" → ")}`).toBe("ready");
      expect(mine.length, `${name}: ${mine.join(" → ")}`).toBeGreaterThan(1);
    }
    await tab.screenshot("documents");
    // A narrow window: the table scrolls inside its frame, the page itself never sideways.
    await page.setViewportSize({ width: 420, height: 900 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await tab.screenshot("documents-narrow");
    await page.setViewportSize({ width: 1366, height: 860 });

    await page.getByRole("radio", { name: /Failed/ }).click();
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByRole("radio", { name: /Ready/ }).click();
    await expect.poll(() => rows.count()).toBe(FIXTURES.length);
    await page.getByRole("radio", { name: /All/ }).click();

    // Leave the CSV out of search; the switch reflects the server's answer.
    const csvSwitch = page.getByRole("switch", { name: "customers.csv enabled" });
    await csvSwitch.uncheck();
    await expect.poll(() => csvSwitch.isChecked()).toBe(false);
    const docs = (await quarry.client.listDocuments({ knowledgeBase: KB })).documents;
    expect(docs.find((d) => d.fileName === "customers.csv")?.enabled).toBe(false);

    // Delete the failed one, after its confirmation.
    const scanned = page.getByRole("row", { name: "scanned.pdf" });
    await scanned.getByRole("button", { name: "Delete" }).click();
    await scanned.getByRole("button", { name: "Cancel" }).waitFor();
    await scanned.getByRole("button", { name: "Delete" }).click();
    await expect.poll(() => rows.count()).toBe(FIXTURES.length);
    expect((await quarry.client.listDocuments({ knowledgeBase: KB })).documents.map((d) => d.fileName)).not.toContain("scanned.pdf");

    await page.getByRole("link", { name: "Knowledge bases" }).first().click();
    const card = page.getByRole("article", { name: KB });
    await expect.poll(async () => Number(await card.locator('[data-count="documents"]').textContent())).toBe(FIXTURES.length);
    expect(Number((await card.locator('[data-count="chunks"]').textContent())?.replace(/,/g, ""))).toBeGreaterThan(5);
    await tab.screenshot("knowledge-bases");
    noErrors();
  }, 240_000);

  it("opens a document from its file name and corrects it: search within, edit a chunk, disable and enable one, add one", async () => {
    const { quarry, tab, page } = ui;
    const bm25 = async (query: string) => (await quarry.client.search({ query, knowledgeBases: [KB], settings: { mode: RetrievalMode.BM25 } })).hits;
    await page.getByRole("article", { name: KB }).getByRole("link", { name: KB }).click();
    await page.getByLabel("Files to upload").setInputFiles({ name: "station-log.md", mimeType: "text/markdown", buffer: Buffer.from(STATION_LOG) });
    const row = page.getByRole("row", { name: "station-log.md" });
    await expect.poll(() => row.getAttribute("data-status"), { timeout: 120_000 }).toBe("ready");
    await row.getByRole("link", { name: "station-log.md" }).click();
    await page.getByRole("heading", { name: "station-log.md" }).waitFor();
    const cards = page.locator("article.chunk");
    const { total, chunks } = await quarry.client.listDocumentChunks({ documentId: (await quarry.client.listDocuments({ knowledgeBase: KB })).documents.find((d) => d.fileName === "station-log.md")!.id });
    expect(total).toBeGreaterThanOrEqual(3);
    await expect.poll(() => cards.count()).toBe(total);
    // Each card by its place: a card being edited shows its text in a text box, which hasText does not read.
    const cardWith = (text: string) => page.getByRole("article", { name: `chunk ${chunks.find((c) => c.text.includes(text))!.index + 1}`, exact: true });
    await expect(cardWith("north-westerly").locator(".section-path").textContent()).resolves.toBe("Station log › Weather");

    // Search within: only the chunk with the words, the words marked.
    await page.getByLabel("Search within the document").fill("Marigold");
    await expect.poll(() => cards.count()).toBe(1);
    await cards.first().locator("mark", { hasText: /^marigold$/i }).first().waitFor();
    await page.getByRole("status").filter({ hasText: `1 of ${total} chunks contain “Marigold”` }).waitFor();
    await page.getByLabel("Search within the document").fill("");
    await expect.poll(() => cards.count()).toBe(total);

    // Edit: saved, marked edited with its version and the ingested text kept, searchable at once.
    const weather = cardWith("north-westerly");
    await weather.getByRole("button", { name: "Edit" }).click();
    await weather.getByRole("textbox").fill("The keeper logged a zephyrine breeze at dawn and a calm sea all day.");
    await weather.getByRole("button", { name: "Save" }).click();
    const edited = weather;
    await edited.locator(".pill", { hasText: "edited · v2" }).waitFor();
    await edited.getByText("Text as ingested").click();
    await edited.locator("details.original", { hasText: "north-westerly" }).waitFor();
    expect((await bm25("zephyrine")).map((h) => h.fileName)).toEqual(["station-log.md"]);
    // An empty text cannot be saved; a text longer than the base's chunks is refused with the reason.
    await edited.getByRole("button", { name: "Edit" }).click();
    await edited.getByRole("textbox").fill("   ");
    expect(await edited.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    // The browser logs the refused call (HTTP 400) as a console error: expected here.
    tab.allow(/status of 400/);
    await edited.getByRole("textbox").fill("A very long correction. ".repeat(80));
    await edited.getByRole("button", { name: "Save" }).click();
    await edited.getByRole("alert").filter({ hasText: /longer than one chunk of knowledge base handbook/ }).waitFor();
    await edited.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => edited.getByRole("alert").count()).toBe(0);

    // Disable, then enable: out of search and back.
    const ships = cardWith("Marigold");
    await ships.getByRole("button", { name: "Disable" }).click();
    await ships.locator(".pill", { hasText: "disabled" }).waitFor();
    expect(await bm25("schooner Marigold")).toEqual([]);
    await ships.getByRole("button", { name: "Enable" }).click();
    await ships.getByRole("button", { name: "Disable" }).waitFor();
    expect((await bm25("schooner Marigold")).map((h) => h.fileName)).toEqual(["station-log.md"]);

    // Add a chunk by hand under a section.
    const form = page.getByRole("form", { name: "Add a chunk" });
    await form.getByLabel("Text").fill("The foghorn is tested every Sunday at noon and its compressor oiled.");
    await form.getByLabel(/Section/).fill("Station log › Notes");
    await form.getByRole("button", { name: "Add chunk" }).click();
    const added = cards.filter({ hasText: "foghorn" });
    await added.locator(".pill", { hasText: "manual" }).waitFor();
    await expect(added.locator(".section-path").textContent()).resolves.toBe("Station log › Notes");
    expect((await bm25("foghorn compressor")).map((h) => h.fileName)).toEqual(["station-log.md"]);
    await page.locator(".screen-head .muted", { hasText: `${total + 1} chunks · 1 edited · 1 added by hand` }).waitFor();
    await tab.screenshot("document-chunks");

    // Back to the base by the crumbs; the document goes, so the steps below see the fixtures alone.
    await page.locator(".crumbs").getByRole("link", { name: KB }).click();
    await row.getByRole("button", { name: "Delete" }).click();
    await row.getByRole("button", { name: "Delete" }).click();
    await expect.poll(async () => (await quarry.client.listDocuments({ knowledgeBase: KB })).documents.map((d) => d.fileName)).not.toContain("station-log.md");
    await page.getByRole("link", { name: "Knowledge bases" }).first().click();
    noErrors();
  }, 180_000);

  it("previews a file's chunks and re-chunks them as the size changes", async () => {
    const { tab, page } = ui;
    await page.getByRole("link", { name: "Chunk preview" }).click();
    await page.getByLabel("File to preview").setInputFiles(await filePayload("rules-zh.md"));
    const total = page.getByTestId("total-chunks");
    await total.waitFor();
    // The knowledge base's settings (200 tokens, 20 overlap, chosen at creation) replace the defaults.
    await page.getByLabel("Settings from").selectOption({ label: KB });
    const sizeShown = page.locator("label", { hasText: "Chunk size" }).locator("output");
    await expect.poll(() => sizeShown.textContent()).toBe("200");
    await expect.poll(() => page.locator("label", { hasText: "Overlap" }).locator("output").textContent()).toBe("20");
    const before = Number(await total.textContent());
    expect(before).toBeGreaterThan(0);
    await expect(page.locator(".chunk").first().textContent()).resolves.toMatch(/tokens/);
    await page.locator(".section-path").filter({ hasText: CHINESE_RULES_FACT.path.slice(0, 2).join(" › ") }).first().waitFor();
    // Home moves the slider to its smallest size: more, smaller chunks, without choosing the file again.
    await page.getByLabel("Chunk size", { exact: true }).focus();
    await page.keyboard.press("Home");
    await expect.poll(async () => Number(await total.textContent()), { timeout: 20_000 }).toBeGreaterThan(before);
    await tab.screenshot("chunk-preview", { fullPage: false });

    await page.getByLabel("File to preview").setInputFiles(await filePayload("lighthouses.pdf"));
    await page.locator(".chunk .pill", { hasText: /^page 2$/ }).first().waitFor({ timeout: 20_000 });
    noErrors();
  });

  it("runs a retrieval test with the explanation, highlighted terms (Chinese too) and score bands", async () => {
    const { tab, page } = ui;
    await page.getByRole("link", { name: "Retrieval test" }).click();
    const form = page.getByRole("form", { name: "Retrieval test" });
    // Nothing is chosen for the user (console-first-hour.browser.test.ts): choose the base.
    await form.getByRole("checkbox", { name: KB }).check();
    await form.getByLabel("Query").fill(CHINESE_RULES_FACT.question);
    await form.getByLabel("Query").press("Enter");
    const first = page.getByRole("article", { name: "result 1", exact: true });
    await first.waitFor();
    await expect(first.locator(".file").textContent()).resolves.toBe("rules-zh.md");
    expect(await first.locator("mark").count()).toBeGreaterThan(0);
    expect(await first.locator("mark").first().textContent()).toMatch(/\p{Script=Han}/u);
    const explain = await first.getByLabel("explain").textContent();
    expect(explain).toMatch(/fused[\d.]+/);
    expect(explain).toMatch(/BM25#\d+ · [\d.]+/);
    await tab.screenshot("retrieval-test-zh");

    // English in hybrid mode: both lists; the badge is the vector similarity, coloured by its band.
    await form.getByLabel("Query").fill(COMPANY_FACT.question);
    await form.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => first.locator(".file").textContent()).toBe("company.md");
    const hybrid = (await first.getByLabel("explain").textContent())!;
    const similarity = Number(/vector#\d+ · ([\d.]+)/.exec(hybrid)?.[1]);
    expect(similarity, hybrid).toBeGreaterThan(0);
    // The bands are the base's model's recorded distribution (console-score-bands.browser.test.ts).
    const bands = (await ui.quarry.client.getKnowledgeBase({ knowledgeBase: KB })).knowledgeBase!.vectorScoreBands!;
    const band = similarity >= bands.relevantMedian ? "high" : similarity >= bands.bestIrrelevantMedian ? "mid" : "low";
    expect(await first.locator(".hit-head .score").getAttribute("class")).toBe(`score score-${band}`);
    await first.locator("mark", { hasText: /^headquartered$/i }).first().waitFor();
    // Function words ("is", "in") are not marked: they say nothing about why the chunk matched.
    expect(await first.locator("mark", { hasText: /^(is|in|the)$/i }).count()).toBe(0);
    await tab.screenshot("retrieval-test");

    // BM25 alone: no vector list, so no similarity to colour.
    await form.getByLabel("Mode").selectOption({ label: "bm25" });
    await form.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => first.getByLabel("explain").textContent()).toMatch(/vectornot in list/);
    expect(await first.locator(".hit-head .score").count()).toBe(0);
    noErrors();
  });

  it("chats: the answer streams with citation chips, and a chip shows its source", async () => {
    const { tab, page } = ui;
    await page.getByRole("link", { name: "Chat" }).click();
    await page.getByRole("checkbox", { name: KB }).check();
    await page.getByLabel("Question").fill(COMPANY_FACT.question);
    await page.getByLabel("Question").press("Enter");
    const meta = page.locator(".answer-meta");
    await meta.waitFor({ timeout: 60_000 });
    await expect(page.locator(".answer-text").textContent()).resolves.toContain(COMPANY_FACT.word);
    const chips = page.locator(".answer-text button.cite");
    expect(await chips.count()).toBeGreaterThan(0);
    const marker = await chips.first().textContent();
    await chips.first().click();
    const source = page.getByRole("complementary", { name: "Sources" }).locator("li.selected");
    await expect(source.getAttribute("data-marker")).resolves.toBe(marker);
    await expect(source.textContent()).resolves.toContain("company.md");
    await expect(source.locator(".snippet").textContent()).resolves.toMatch(/\S/);
    await tab.screenshot("chat");

    // The same screen in a narrow window: the sources panel moves under the conversation.
    await page.setViewportSize({ width: 420, height: 900 });
    const box = await page.getByRole("complementary", { name: "Sources" }).boundingBox();
    expect(box!.width).toBeLessThanOrEqual(420);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await tab.screenshot("chat-narrow");
    await page.setViewportSize({ width: 1366, height: 860 });
    noErrors();
  });

  it("creates an admin key; a new tab is asked for it and works once it is given", async () => {
    const { quarry, browser, tab, page } = ui;
    await page.getByRole("link", { name: "API keys" }).click();
    const form = page.getByRole("form", { name: "New API key" });
    await form.getByLabel("Name").fill("console-admin");
    await form.getByLabel("Role").selectOption({ label: "admin" });
    await form.getByRole("button", { name: "Create key" }).click();
    const secret = (await page.getByTestId("new-secret").textContent())!;
    expect(secret).toMatch(/^qk_/);
    // Keys are on now: this tab, which had none, goes on with the new admin key.
    await page.getByRole("row", { name: "console-admin" }).waitFor();
    expect(await page.getByRole("button", { name: "Use it in this tab" }).count()).toBe(0);
    await form.getByLabel("Name").fill("reader 读者");
    await form.getByLabel("Role").selectOption({ label: "reader" });
    await form.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("row", { name: "reader 读者" }).waitFor();
    await tab.screenshot("api-keys");

    const fresh = await watchedPage(browser);
    fresh.allow(/status of 401/);
    await fresh.page.goto(quarry.url);
    const prompt = fresh.page.getByRole("form", { name: "API key" });
    await prompt.waitFor();
    await expect(prompt.textContent()).resolves.toMatch(/needs an API key/);
    await fresh.screenshot("key-prompt");
    await prompt.getByLabel("API key").fill(secret);
    await prompt.getByLabel("API key").press("Enter");
    await fresh.page.getByRole("article", { name: KB }).waitFor();
    await expect.poll(() => prompt.count()).toBe(0);

    // Revoke the reader from the new tab, with its confirmation.
    await fresh.page.getByRole("link", { name: "API keys" }).click();
    // Revoking the key this tab uses says what it costs before it happens.
    const own = fresh.page.getByRole("row", { name: "console-admin" });
    await own.getByRole("button", { name: "Revoke" }).click();
    await own.getByRole("button", { name: "Revoke console-admin: this tab uses it and loses access" }).waitFor();
    await own.getByRole("button", { name: "Cancel" }).click();
    const row = fresh.page.getByRole("row", { name: "reader 读者" });
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.getByRole("button", { name: "Revoke reader 读者" }).click();
    await expect.poll(() => row.count()).toBe(0);
    expect((await quarry.client.listApiKeys({}, { headers: { authorization: `Bearer ${secret}` } })).apiKeys.map((k) => k.name)).toEqual(["console-admin"]);
    expect(fresh.errors()).toEqual([]);
    await fresh.context.close();
    noErrors();
  });
});

describeWithShared("corpus/docs", "the console with the real corpus (../shared/corpus/docs)", (docs) => {
  const FILES = ["zh_distributed_training_principles.md", "csv-comma.csv", "wiki.md", "book-war-and-peace-1p.txt"];
  const executablePath = checkRequirement(chromiumRequirement, '"the console with the real corpus"');
  const ui = executablePath ? consoleInChromium(executablePath, () => startEmbeddedQuarry()) : undefined;

  it.skipIf(!ui)("ingests real documents through the UI and finds a Chinese passage", async () => {
    const { quarry, tab, page } = ui!;
    await page.goto(quarry.url);
    await page.getByRole("button", { name: "New knowledge base" }).click();
    const form = page.getByRole("form", { name: "New knowledge base" });
    await form.getByLabel("Name").fill("corpus");
    await form.getByLabel("Name").press("Enter");
    await page.getByRole("article", { name: "corpus" }).getByRole("link", { name: "corpus" }).click();
    await page.getByLabel("Files to upload").setInputFiles(FILES.map((name) => join(docs, name)));
    const settled = page.locator('tr[data-status="ready"], tr[data-status="failed"]');
    await expect.poll(() => settled.count(), { timeout: 180_000 }).toBe(FILES.length);
    await tab.screenshot("documents-real-corpus");
    expect(await page.locator('tr[data-status="failed"]').allTextContents()).toEqual([]);

    await page.getByRole("link", { name: "Retrieval test" }).click();
    const search = page.getByRole("form", { name: "Retrieval test" });
    await search.getByRole("checkbox", { name: "corpus" }).check();
    await search.getByLabel("Query").fill("FSDP 分片参数 峰值内存");
    await search.getByLabel("Query").press("Enter");
    const first = page.getByRole("article", { name: "result 1", exact: true });
    await expect.poll(() => first.locator(".file").textContent(), { timeout: 20_000 }).toBe("zh_distributed_training_principles.md");
    expect(await first.locator("mark", { hasText: "峰值" }).count()).toBeGreaterThan(0);
    expect(tab.errors()).toEqual([]);
  }, 240_000);
});

describeWith(chromiumRequirement, "the console's chat with a language model (the OpenAI stub)", (executablePath) => {
  let stub: OpenAiStub | undefined;
  // Registered before the session's hooks, so (after hooks run in reverse) the stub closes after Quarry stops.
  afterAll(async () => {
    await stub?.close();
  });
  const ui = consoleInChromium(executablePath, async () => {
    // The first sentence is what [1] says; the second cites [1] for something it does not say.
    stub = await startOpenAiStub({
      reply: () => "Tallis Instruments is headquartered in Ely, Cambridgeshire [1]. It also builds racing bicycles for the moon [1].",
      split: (reply) => reply.match(/[^ ]+ ?/g) ?? [reply],
      deltaDelayMs: 40,
    });
    return startEmbeddedQuarry({ env: { OPENAI_BASE_URL: stub.url, QUARRY_CHAT_MODEL: "stub-chat", OPENAI_API_KEY: "test-key" } });
  });

  it("streams the model's answer in pieces and marks the citation its passage does not support", async () => {
    const { quarry, tab, page } = ui;
    await page.goto(quarry.url);
    await page.getByRole("button", { name: "New knowledge base" }).click();
    await page.getByRole("form", { name: "New knowledge base" }).getByLabel("Name").fill(KB);
    await page.getByRole("form", { name: "New knowledge base" }).getByLabel("Name").press("Enter");
    await page.getByRole("article", { name: KB }).getByRole("link", { name: KB }).click();
    await page.getByLabel("Files to upload").setInputFiles(await filePayload("company.md"));
    await expect.poll(() => page.locator('tr[data-status="ready"]').count(), { timeout: 120_000 }).toBe(1);

    await page.getByRole("link", { name: "Chat" }).click();
    await page.getByRole("checkbox", { name: KB }).check();
    // Every length the answer had on screen: more than a couple means it arrived in pieces.
    await page.evaluate(() => {
      const lengths: number[] = ((window as unknown as { answerLengths: number[] }).answerLengths = []);
      new MutationObserver(() => {
        const n = document.querySelector(".answer-text")?.textContent?.length ?? 0;
        if (n !== lengths.at(-1)) lengths.push(n);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByLabel("Question").fill(COMPANY_FACT.question);
    await page.getByLabel("Question").press("Enter");
    await page.locator(".answer-meta").waitFor({ timeout: 60_000 });
    const lengths = await page.evaluate(() => (window as unknown as { answerLengths: number[] }).answerLengths);
    expect(lengths.length, `answer lengths seen: ${lengths.join(", ")}`).toBeGreaterThan(3);

    const chips = page.locator(".answer-text button.cite");
    await expect.poll(() => chips.count()).toBe(2);
    expect(await chips.nth(0).getAttribute("class")).toBe("cite");
    expect(await chips.nth(1).getAttribute("class")).toBe("cite unsupported");
    expect(await chips.nth(1).getAttribute("aria-label")).toBe("citation 1 (unsupported)");
    await expect(page.locator(".answer-meta").textContent()).resolves.toMatch(/stub-chat.*1 citation\(s\) not supported/);
    await chips.nth(1).click();
    await expect(page.getByRole("complementary", { name: "Sources" }).locator("li.selected").textContent()).resolves.toContain("company.md");
    await tab.screenshot("chat-unsupported");

    // Delete the knowledge base from its card, after the confirmation.
    await page.getByRole("link", { name: "Knowledge bases" }).first().click();
    const card = page.getByRole("article", { name: KB });
    await card.getByRole("button", { name: "Delete" }).click();
    await card.getByRole("button", { name: `Delete ${KB} and its documents` }).click();
    await page.getByText("No knowledge bases yet").waitFor();
    expect((await quarry.client.listKnowledgeBases({})).knowledgeBases).toEqual([]);
    expect(tab.errors()).toEqual([]);
  }, 180_000);
});
