import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ParsedDocument } from "../../lib/domain.ts";
import { FailedPreconditionError, UnavailableError } from "../../lib/errors.ts";
import { BuiltinParser } from "./builtin-parser.ts";
import type { DocumentParser, ParseInput } from "./document-parser.ts";
import { RoutingParser } from "./routing-parser.ts";

const docs = path.resolve(process.cwd(), "../shared/corpus/docs");
const input = (fileName: string): ParseInput => ({
  bytes: new Uint8Array(readFileSync(path.join(docs, fileName))),
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
    for (const file of ["wiki.md", "wiki_duck.html", "csv-comma.csv", "norwich-city.txt"]) {
      expect((await router.parse(input(file))).parser).toMatch(/^builtin:/);
    }
    expect(tika.seen).toEqual([]);
  });

  it("sends PDFs and office formats to Tika when it is configured", async () => {
    const tika = new RecordingParser();
    const router = new RoutingParser({ builtin: new BuiltinParser(), tika });
    for (const file of ["multi_page.pdf", "word_sample.docx", "vodafone.xlsx", "legacy_sample.doc", "epub_purvis_poetry.epub"]) {
      expect((await router.parse(input(file))).parser).toBe("tika");
    }
    expect(tika.seen).toEqual(["multi_page.pdf", "word_sample.docx", "vodafone.xlsx", "legacy_sample.doc", "epub_purvis_poetry.epub"]);
  });

  it("fails rather than falling back when Tika is down, so the document can be retried", async () => {
    const router = new RoutingParser({ builtin: new BuiltinParser(), tika: new RecordingParser(new UnavailableError("Tika at X is unreachable")) });
    await expect(router.parse(input("multi_page.pdf"))).rejects.toThrow(UnavailableError);
  });

  it("without Tika, parses PDFs itself and explains what it cannot read", async () => {
    const router = new RoutingParser({ builtin: new BuiltinParser() });
    expect((await router.parse(input("multi_page.pdf"))).parser).toBe("builtin:pdf");
    await expect(router.parse(input("powerpoint_sample.pptx"))).rejects.toThrow(FailedPreconditionError);
    await expect(router.parse(input("powerpoint_sample.pptx"))).rejects.toThrow(/PowerPoint presentation.*configure TIKA_URL/);
  });
});
