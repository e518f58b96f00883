import { describe, expect, it } from "vitest";
import type { ParsedDocument } from "../../lib/domain.ts";
import { FailedPreconditionError, UnavailableError } from "../../lib/errors.ts";
import { fixtureBytes, ole2Header, zipArchive, type FixtureName } from "../../test/fixtures/fixture-documents.ts";
import { BuiltinParser } from "./builtin-parser.ts";
import type { DocumentParser, ParseInput } from "./document-parser.ts";
import { RoutingParser } from "./routing-parser.ts";

const PPTX = zipArchive({ "[Content_Types].xml": "<Types/>", "ppt/presentation.xml": "<p:presentation/>" });
const crafted: Record<string, Buffer> = { "deck.pptx": PPTX, "old-report.doc": ole2Header() };
const input = async (fileName: string): Promise<ParseInput> => ({
  bytes: new Uint8Array(crafted[fileName] ?? (await fixtureBytes(fileName as FixtureName))),
  fileName,
  declaredMimeType: "application/octet-stream",
});

/** Stands in for Tika: records what it was asked to parse. */
class RecordingParser implements DocumentParser {
  seen: string[] = [];
  constructor(private readonly fail?: Error) {}
  async parse({ fileName }: ParseInput): Promise<ParsedDocument> {
    this.seen.push(fileName);
    if (this.fail) throw this.fail;
    return { text: "from tika", mimeType: "x/y", parser: "tika", pages: [], sections: [], metadata: {} };
  }
}

describe("RoutingParser", () => {
  it("keeps text formats on the built-ins even with Tika configured", async () => {
    const tika = new RecordingParser();
    const router = new RoutingParser({ builtin: new BuiltinParser(), tika });
    for (const file of ["company.md", "field-guide.html", "customers.csv", "prose.txt", "routes.json"]) {
      expect((await router.parse(await input(file))).parser).toMatch(/^builtin:/);
    }
    expect(tika.seen).toEqual([]);
  });

  it("sends PDFs and office formats to Tika when it is configured", async () => {
    const tika = new RecordingParser();
    const router = new RoutingParser({ builtin: new BuiltinParser(), tika });
    const files = ["lighthouses.pdf", "canal-boating.docx", "ferries.xlsx", "old-report.doc", "harbour-verses.epub", "allotment.odt", "deck.pptx"];
    for (const file of files) {
      expect((await router.parse(await input(file))).parser).toBe("tika");
    }
    expect(tika.seen).toEqual(files);
  });

  it("fails rather than falling back when Tika is down, so the document can be retried", async () => {
    const router = new RoutingParser({ builtin: new BuiltinParser(), tika: new RecordingParser(new UnavailableError("Tika at X is unreachable")) });
    await expect(router.parse(await input("lighthouses.pdf"))).rejects.toThrow(UnavailableError);
  });

  it("without Tika, parses PDFs and Office files itself and explains what it cannot read", async () => {
    const router = new RoutingParser({ builtin: new BuiltinParser() });
    expect((await router.parse(await input("lighthouses.pdf"))).parser).toBe("builtin:pdf");
    expect((await router.parse(await input("canal-boating.docx"))).parser).toBe("builtin:docx");
    const rtf: ParseInput = { bytes: new TextEncoder().encode("{\\rtf1 Ferries}"), fileName: "memo.rtf", declaredMimeType: "application/rtf" };
    await expect(router.parse(rtf)).rejects.toThrow(FailedPreconditionError);
    await expect(router.parse(rtf)).rejects.toThrow(/RTF document.*configure TIKA_URL/);
  });
});
