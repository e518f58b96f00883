// Trace links in headless Chromium against an embedded Quarry that traces (a real OTLP/HTTP listener
// receives its spans) and has a trace viewer configured: the document page links to the trace its
// upload made, and a chat turn's provenance to the trace of its Chat call — the very trace ids the
// listener received for the gateway's UploadDocument and Chat.
import { afterAll, beforeAll, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { startOtlpReceiver, type OtlpReceiver } from "../../lib/testing/otlp-receiver.ts";
import { fixtureBytes } from "../fixtures/fixture-documents.ts";
import { COMPANY_FACT } from "../fixtures/fixture-texts.ts";
import { chromiumRequirement, consoleInChromium } from "../support/console-browser.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { describeWith } from "../support/engines.ts";
import { lastUpdate, upload, watchAll } from "../e2e/e2e-helpers.ts";

const VIEWER = "http://viewer.test/trace/{trace_id}";
const SERVER = 2;

describeWith(chromiumRequirement, "trace links on the document page and a turn's provenance (embedded Quarry)", (executablePath) => {
  let receiver: OtlpReceiver;
  let documentId = "";
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  const ui = consoleInChromium(
    executablePath,
    () => startEmbeddedQuarry({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, QUARRY_TRACE_VIEWER_URL: VIEWER } }),
    {
      prepare: async (quarry) => {
        await quarry.client.createKnowledgeBase({ name: "traced" });
        documentId = (await upload(quarry.client, "traced", "company.md", await fixtureBytes("company.md"))).document!.id;
        expect(lastUpdate(await watchAll(quarry.client, [documentId]), documentId).status).toBe(DocumentStatus.READY);
        for await (const _ of quarry.client.chat({ question: COMPANY_FACT.question, knowledgeBases: ["traced"] })) {
          // The turn is kept once the stream ends.
        }
      },
      timeout: 240_000,
    },
  );

  /** The trace id the listener received for the gateway's call; the batch exporter sends within seconds. */
  async function receivedTraceOf(method: string): Promise<string> {
    await expect.poll(() => receiver.spans.some((s) => s.kind === SERVER && s.name === `quarry.gateway.v1.QuarryService/${method}`), { timeout: 30_000 }).toBe(true);
    return receiver.spans.find((s) => s.kind === SERVER && s.name === `quarry.gateway.v1.QuarryService/${method}`)!.traceId;
  }

  it("links the document page to its upload's trace", async () => {
    const { quarry, page, tab } = ui;
    const traceId = await receivedTraceOf("UploadDocument");
    await page.goto(`${quarry.url}/kb/traced/doc/${encodeURIComponent(documentId)}`);
    const link = page.getByRole("link", { name: "ingestion trace" });
    await link.waitFor();
    expect(await link.getAttribute("href")).toBe(VIEWER.replace("{trace_id}", traceId));
    expect(tab.errors()).toEqual([]);
  }, 120_000);

  it("links a chat turn's provenance to the trace of its Chat call", async () => {
    const { quarry, page, tab } = ui;
    const traceId = await receivedTraceOf("Chat");
    await page.goto(`${quarry.url}/chat`);
    const list = page.getByRole("navigation", { name: "Conversations" });
    await list.getByRole("button", { name: new RegExp(COMPANY_FACT.question.replace("?", "\\?")) }).click();
    await page.locator(".turn").nth(0).getByRole("button", { name: "Debug this turn" }).click();
    const panel = page.getByRole("region", { name: "Provenance of turn 1" });
    const link = panel.getByTestId("turn-trace").getByRole("link", { name: "open the turn's trace" });
    await link.waitFor();
    expect(await link.getAttribute("href")).toBe(VIEWER.replace("{trace_id}", traceId));
    expect(tab.errors()).toEqual([]);
  }, 120_000);
});
