import { readFileSync } from "node:fs";
import path from "node:path";
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { FailedPreconditionError, InvalidInputError } from "../../lib/errors.ts";
import { fixtureBytes, ole2Header, zipArchive, type FixtureName } from "../../test/fixtures/fixture-documents.ts";
import { CHINESE_RULES_FACT, DOCX_CONTENT, SLIDES_CONTENT } from "../../test/fixtures/fixture-texts.ts";
import { describeWithShared } from "../../test/support/shared-material.ts";
import { BuiltinParser } from "./builtin-parser.ts";

const parser = new BuiltinParser();
const parseBytes = (bytes: Uint8Array, fileName: string, declaredMimeType = "application/octet-stream") =>
  parser.parse({ bytes, fileName, declaredMimeType });
const parseFixture = async (name: FixtureName, fileName: string = name) => parseBytes(new Uint8Array(await fixtureBytes(name)), fileName);

describe("BuiltinParser", () => {
  it.each([
    ["company.md", "builtin:markdown", "text/markdown"],
    ["prose.txt", "builtin:text", "text/plain"],
    ["field-guide.html", "builtin:html", "text/html"],
    ["customers.csv", "builtin:csv", "text/csv"],
    ["routes.json", "builtin:json", "application/json"],
    ["lighthouses.pdf", "builtin:pdf", "application/pdf"],
  ] as [FixtureName, string, string][])("routes %s to %s", async (file, parserName, mimeType) => {
    const parsed = await parseFixture(file);
    expect(parsed.parser).toBe(parserName);
    expect(parsed.mimeType).toBe(mimeType);
    expect(parsed.text.length).toBeGreaterThan(100);
  });

  it("records the encoding of text formats", async () => {
    const md = await parseFixture("rules-zh.md");
    expect(md.metadata.encoding).toBe("UTF-8");
    expect(md.sections.length).toBe(CHINESE_RULES_FACT.sectionCount);
    const utf16 = await parseFixture("prose-utf16.txt");
    expect(utf16.metadata.encoding).toBe("UTF-16LE");
    expect(utf16.text).toContain("Ottilie Brandauer");
    const gbk = iconv.encode("标题,内容\n数据并行,每块GPU上维护一个模型副本并通过集体通信同步梯度\n", "gb18030");
    const csv = await parser.parse({ bytes: new Uint8Array(gbk), fileName: "gbk.csv", declaredMimeType: "text/csv" });
    expect(csv.metadata.encoding).toBe("GB18030");
    expect(csv.text).toBe("Columns: 标题; 内容\n标题: 数据并行; 内容: 每块GPU上维护一个模型副本并通过集体通信同步梯度");
  });

  it("reads GB18030 Markdown as Chinese", async () => {
    const notes = await parseFixture("notes-zh-gb18030.txt", "notes-zh.md");
    expect(notes.metadata.encoding).toBe("GB18030");
    expect(notes.sections.map((s) => s.path)).toEqual([["家庭养蜂要点"]]);
    expect(notes.text).toContain("每群蜜蜂只有一只蜂王");
  });

  it("reads plain text in many scripts", async () => {
    const parsed = await parseFixture("scripts.txt");
    for (const line of ["每个人都应该被善待", "Κάθε άνθρωπος", "كل إنسان يستحق", "모든 사람은", "ทุกคนสมควร"]) expect(parsed.text).toContain(line);
    expect(parsed.pages).toEqual([]);
  });

  it.each([
    ["canal-boating.docx", "builtin:docx", ["Canal Boating for Beginners", "Canal Boating for Beginners > Working a Lock", "Canal Boating for Beginners > Mooring for the Night"]],
    ["allotment.odt", "builtin:odt", ["Allotment Notes", "Spring", "Spring > Potatoes", "Autumn"]],
    ["harbour-verses.epub", "builtin:epub", ["Harbour Verses", "Harbour Verses > Morning Tide", "Harbour Verses > The Lamp on the Point"]],
    ["ferries.xlsx", "builtin:xlsx", ["Index", "Ridership"]],
    ["harbour.ods", "builtin:ods", ["Berths", "Tariffs"]],
  ] as [FixtureName, string, string[]][])("reads %s with %s, headings or sheets as sections", async (file, parserName, paths) => {
    const parsed = await parseFixture(file);
    expect(parsed.parser).toBe(parserName);
    expect(parsed.sections.map((s) => s.path.join(" > "))).toEqual(paths);
    for (const section of parsed.sections) expect(parsed.text.slice(section.start, section.end).startsWith(section.path.at(-1)!)).toBe(true);
  });

  it("keeps a Word table's header on every row and the document's title and author", async () => {
    const parsed = await parseFixture("canal-boating.docx");
    expect(parsed.text).toContain(
      `Columns: Boat; Length; Berths\nBoat: Narrowboat; Length: 57 ft; Berths: 4\nBoat: Wide beam; Length: 60 ft; Berths: 6`,
    );
    expect(parsed.metadata).toMatchObject({ title: DOCX_CONTENT.title, author: DOCX_CONTENT.author });
    const lock = parsed.sections[1];
    expect(parsed.text.slice(lock.start, lock.end)).toContain(DOCX_CONTENT.steps[0]);
  });

  it("labels each sheet's rows with the header, below the title rows above it", async () => {
    const xlsx = await parseFixture("ferries.xlsx");
    const ridership = xlsx.sections[1];
    expect(xlsx.text.slice(ridership.start, ridership.end).split("\n").slice(2)).toEqual([
      "Columns: Quarter; Passengers; Freight units",
      "Quarter: Q3 2023; Passengers: 412000; Freight units: 18300",
      "Quarter: Q4 2023; Passengers: 298000; Freight units: 17100",
      "Quarter: Q1 2024; Passengers: 251000; Freight units: 16900",
      "Quarter: Q2 2024; Passengers: 455000; Freight units: 19400",
    ]);
    expect(xlsx.metadata.sheetCount).toBe("2");
    const ods = await parseFixture("harbour.ods");
    const tariffs = ods.sections[1];
    expect(ods.text.slice(tariffs.start, tariffs.end)).toBe(
      "Tariffs\n\nHarbour dues 2025\nColumns: Vessel class; Per call (EUR); Per day (EUR)\n" +
        "Vessel class: Passenger ferry; Per call (EUR): 310; Per day (EUR): 95\nVessel class: Cargo feeder; Per call (EUR): 540; Per day (EUR): 120",
    );
  });

  it.each([["timetable.pptx", "builtin:pptx"], ["timetable.odp", "builtin:odp"]] as [FixtureName, string][])(
    "reads %s slide by slide as pages, with speaker notes and tables",
    async (file, parserName) => {
      const parsed = await parseFixture(file);
      expect(parsed.parser).toBe(parserName);
      expect(parsed.pages.map((p) => p.number)).toEqual([1, 2, 3]);
      const pageText = parsed.pages.map((p) => parsed.text.slice(p.start, p.end));
      SLIDES_CONTENT.slides.forEach((slide, i) => {
        expect(pageText[i].startsWith(slide.title)).toBe(true);
        for (const line of slide.lines) expect(pageText[i]).toContain(line);
      });
      expect(pageText[1]).toContain("Route: Tallinn–Helsinki; Summer: 12; Winter: 8");
      expect(pageText[2]).toContain("Remind crews of the ice pilot roster.");
      expect(parsed.sections.map((s) => s.path.join(" > "))).toEqual(SLIDES_CONTENT.slides.map((s) => s.title));
      expect(parsed.metadata.pageCount).toBe("3");
    },
  );

  it("names the format it cannot read and points at Tika", async () => {
    const rtf = new TextEncoder().encode("{\\rtf1\\ansi Ferries}");
    await expect(parseBytes(rtf, "memo.rtf")).rejects.toThrow(
      new FailedPreconditionError(
        "memo.rtf is an RTF document (application/rtf); the built-in parsers read text, Markdown, HTML, SVG, CSV/TSV, JSON, PDF, " +
          "Word (.docx, .doc), Excel (.xlsx), PowerPoint (.pptx), OpenDocument and EPUB — configure TIKA_URL to parse it with Apache Tika",
      ),
    );
    await expect(parseBytes(ole2Header(), "old-sheet.xls")).rejects.toThrow(/is a legacy Excel workbook \(\.xls\) \(application\/vnd\.ms-excel\).*TIKA_URL/);
    await expect(parseBytes(ole2Header(), "old-deck.ppt")).rejects.toThrow(/is a legacy PowerPoint presentation .*TIKA_URL/);
  });

  it("fails a damaged Office file with a reason, never an empty document", async () => {
    const docx = await fixtureBytes("canal-boating.docx");
    await expect(parseBytes(docx.subarray(0, 2000), "cut.docx")).rejects.toThrow(/^corrupt or unreadable Word document: /);
    await expect(parseBytes(ole2Header(), "old-report.doc")).rejects.toThrow(/^corrupt or unreadable legacy Word document \(\.doc\): /);
    const pptx = zipArchive({ "[Content_Types].xml": "<Types/>", "ppt/presentation.xml": "<p:presentation/>" });
    await expect(parseBytes(pptx, "deck.pptx")).rejects.toThrow(/^deck\.pptx has no text .*configure TIKA_URL/);
  });

  it("sends a PDF without a text layer to Tika with a reason", async () => {
    await expect(parseFixture("scanned.pdf")).rejects.toThrow(/has no text layer/);
  });

  it("refuses an empty upload and binary bytes posing as text", async () => {
    await expect(parser.parse({ bytes: new Uint8Array(), fileName: "a.txt", declaredMimeType: "text/plain" })).rejects.toThrow(
      new InvalidInputError("the file is empty"),
    );
    const docx = new Uint8Array(await fixtureBytes("canal-boating.docx"));
    // A zip renamed .txt is still detected as, and read as, a Word document.
    expect((await parser.parse({ bytes: docx, fileName: "notes.txt", declaredMimeType: "text/plain" })).parser).toBe("builtin:docx");
    const blob = new Uint8Array(2000).map((_, i) => (i % 3 === 0 ? 0 : i % 251));
    await expect(parser.parse({ bytes: blob, fileName: "notes.txt", declaredMimeType: "text/plain" })).rejects.toThrow(/^not valid text: /);
  });
});

describeWithShared("corpus/docs", "BuiltinParser on real-world files", (docs) => {
  const parseFile = (fileName: string) => parseBytes(new Uint8Array(readFileSync(path.join(docs, fileName))), fileName);

  it.each([
    ["wiki.md", "builtin:markdown"],
    ["norwich-city.txt", "builtin:text"],
    ["wiki_duck.html", "builtin:html"],
    ["csv-comma.csv", "builtin:csv"],
    ["multi_page.pdf", "builtin:pdf"],
  ])("routes %s to %s", async (file, parserName) => {
    expect((await parseFile(file)).parser).toBe(parserName);
  });

  it("reads the UDHR's first article in many scripts", async () => {
    expect((await parseFile("UDHR_first_article_all.txt")).text).toContain("人人生而自由");
  });

  it("sends a scanned PDF to Tika with a reason", async () => {
    await expect(parseFile("scanned_ocr_test.pdf")).rejects.toThrow(/has no text layer/);
  });

  it.each([
    ["word_sample.docx", "builtin:docx", ["Swimming in the lake", "Let’s swim!", "Let’s swim! > Let’s eat"], 0],
    ["powerpoint_sample.pptx", "builtin:pptx", ["Test Table Slide", "Second slide title"], 3],
    ["2023-half-year-analyses-by-segment.xlsx", "builtin:xlsx", ["OS-Rev.and results 30 06 2023"], 0],
    ["text_document_01.odt", "builtin:odt", ["heading level 1.0", "heading level 1.0 > Heading level 2: A"], 0],
    ["epub_purvis_poetry.epub", "builtin:epub", ["Poetry", "Poetry > Imprint"], 0],
  ])("reads %s with %s and its structure", async (file, parserName, firstSections, pages) => {
    const parsed = await parseFile(file);
    expect(parsed.parser).toBe(parserName);
    expect(parsed.sections.slice(0, firstSections.length).map((s) => s.path.join(" > "))).toEqual(firstSections);
    expect(parsed.pages).toHaveLength(pages);
  });

  it("reads a legacy Word .doc and a Chinese PowerPoint", async () => {
    const doc = await parseFile("legacy_sample.doc");
    expect(doc.parser).toBe("builtin:doc");
    expect(doc.text).toContain("After we had a good day of swimming in the lake");
    expect((await parseFile("zh_ocr_test.pptx")).text).toContain("我是表格1: 我是表格3");
  });
});
