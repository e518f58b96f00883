// Office files, OpenDocument and EPUB in the default mode, with no TIKA_URL: uploaded through the
// gateway, parsed by the built-in parsers on their worker threads, chunked, embedded and searched.
// The structure must survive into the stored chunks: headings and sheets as section paths, slides
// as page numbers, every table chunk still carrying its header.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RetrievalMode, type Chunk } from "../../gen/quarry/common/v1/common_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { fixtureBytes, type FixtureName } from "../fixtures/fixture-documents.ts";
import { DOCX_CONTENT, SLIDES_CONTENT } from "../fixtures/fixture-texts.ts";
import { expectOrderedProgressToReady, lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

const KB = "office";
const FILES: FixtureName[] = ["canal-boating.docx", "ferries.xlsx", "timetable.pptx", "allotment.odt", "harbour.ods", "timetable.odp", "harbour-verses.epub"];

describe("Office documents without Tika", () => {
  let quarry: EmbeddedQuarryFixture;
  const ids = new Map<string, string>();

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    await quarry.client.createKnowledgeBase({ name: KB });
  });
  afterAll(async () => {
    await quarry?.stop();
  });

  /** The best hit in one document for a keyword query. */
  const topChunk = async (query: string, fileName: string): Promise<Chunk> => {
    const { hits } = await quarry.client.search({ query, knowledgeBases: [KB], settings: { mode: RetrievalMode.BM25, topK: 10 } });
    const hit = hits.find((h) => h.chunk!.documentId === ids.get(fileName));
    expect(hit, `no hit in ${fileName} for "${query}"`).toBeDefined();
    return hit!.chunk!;
  };

  it("ingests every format to READY with chunks", async () => {
    for (const name of FILES) ids.set(name, (await upload(quarry.client, KB, name, await fixtureBytes(name))).document!.id);
    const log = await watchAll(quarry.client, [...ids.values()], 120_000);
    for (const [name, id] of ids) {
      expectOrderedProgressToReady(log.get(id)!, name);
      expect(lastUpdate(log, id).chunkCount, `${name} is ready without chunks`).toBeGreaterThan(0);
    }
  });

  it("keeps Word headings as the section paths of the chunks", async () => {
    const chunk = await topChunk("mooring towpath rope lock landing", "canal-boating.docx");
    expect(chunk.sectionPath).toEqual([DOCX_CONTENT.title, DOCX_CONTENT.secondHeading]);
    expect(chunk.page).toBe(0);
  });

  it("cites a slide as the page it is on, in PowerPoint and OpenDocument decks", async () => {
    for (const file of ["timetable.pptx", "timetable.odp"]) {
      const chunk = await topChunk("ice pilot roster bay freezes", file);
      expect(chunk.page, file).toBe(3);
      expect(chunk.sectionPath, file).toEqual([SLIDES_CONTENT.slides[2].title]);
    }
  });

  it("puts each sheet's rows in its section, every value labelled with its column", async () => {
    const xlsx = await topChunk("Q2 2024 passengers", "ferries.xlsx");
    expect(xlsx.sectionPath).toEqual(["Ridership"]);
    expect(xlsx.text).toContain("Quarter: Q2 2024; Passengers: 455000; Freight units: 19400");
    const ods = await topChunk("cargo feeder per call", "harbour.ods");
    expect(ods.sectionPath).toEqual(["Tariffs"]);
    expect(ods.text).toContain("Vessel class: Cargo feeder; Per call (EUR): 540");
  });

  it("repeats a sheet's header in every chunk of a long table", async () => {
    // Small chunks cut a table of fifty rows into many: each must still say what its numbers are.
    const { default: ExcelJS } = await import("exceljs");
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet("Sailings");
    sheet.addRow(["Sailing", "Departure", "Vessel"]);
    for (let i = 1; i <= 50; i++) sheet.addRow([`S-${i}`, `${String(6 + (i % 14)).padStart(2, "0")}:30`, i % 2 ? "Aurora" : "Saga"]);
    const content = new Uint8Array(await workbook.xlsx.writeBuffer());
    const preview = await quarry.client.previewChunks({ fileName: "sailings.xlsx", content, settings: { chunkSize: 64, chunkOverlap: 0 }, maxChunks: 100 });
    expect(preview.chunks.length).toBeGreaterThan(3);
    for (const chunk of preview.chunks) {
      expect(chunk.sectionPath).toEqual(["Sailings"]);
      for (const line of chunk.text.split("\n").filter((l) => l.startsWith("Sailing: "))) expect(line).toMatch(/^Sailing: S-\d+; Departure: \d\d:30; Vessel: (Aurora|Saga)$/);
    }
  });

  it("keeps an OpenDocument text's heading levels and an e-book's chapters", async () => {
    expect((await topChunk("chit seed potatoes windowsill", "allotment.odt")).sectionPath).toEqual(["Spring", "Potatoes"]);
    expect((await topChunk("lantern keeper patient oil", "harbour-verses.epub")).sectionPath).toEqual(["Harbour Verses", "The Lamp on the Point"]);
  });
});
