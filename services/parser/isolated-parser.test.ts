// The built-in parsers on worker threads, with real threads: a file that makes pdf.js leave a
// promise rejection unhandled must fail on its own, and the process that asked must not notice.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { InvalidInputError, TooLargeError } from "../../lib/errors.ts";
import { silentLogger } from "../../lib/logger.ts";
import { strayRejectionPdf } from "../../test/support/damaged-documents.ts";
import { describeWithShared, sharedCorpusFile } from "../../test/support/shared-material.ts";
import { IsolatedParser } from "./isolated-parser.ts";
import { DEFAULT_PARSE_LIMITS } from "./parse-limits.ts";


describe("IsolatedParser", { timeout: 30_000 }, () => {
  const parsers: IsolatedParser[] = [];
  const stray: unknown[] = [];
  const onStray = (reason: unknown) => stray.push(reason);
  const make = (limits = {}) => {
    const parser = new IsolatedParser({ limits: { ...DEFAULT_PARSE_LIMITS, ...limits }, threads: 1, logger: silentLogger });
    parsers.push(parser);
    return parser;
  };
  beforeEach(() => {
    stray.length = 0;
    process.on("unhandledRejection", onStray);
  });
  afterEach(async () => {
    process.off("unhandledRejection", onStray);
    await Promise.all(parsers.splice(0).map((p) => p.close()));
  });

  // The damaged file is a real-world PDF from ../shared: no PDF this repository generates (pdfkit,
  // pdf-lib) made pdf.js leave its stray rejection in hundreds of tries.
  describeWithShared("corpus/docs", "a corrupt real-world PDF", () => {
    it("fails a corrupt PDF with pdf.js's reason and leaves no unhandled rejection in this process", async () => {
      const parser = make();
      const failure = parser.parse({ bytes: strayRejectionPdf(), fileName: "patched.pdf", declaredMimeType: "application/pdf" });
      await expect(failure).rejects.toBeInstanceOf(InvalidInputError);
      await expect(failure).rejects.toThrow(/Illegal character: 41/);
      // pdf.js's stray rejection comes after the failure; give it time to surface (it must not, here).
      await new Promise((r) => setTimeout(r, 500));
      expect(stray).toEqual([]);
      const good = await parser.parse({ bytes: readFileSync(sharedCorpusFile("multi_page.pdf")), fileName: "multi_page.pdf", declaredMimeType: "" });
      expect(good.pages.length).toBeGreaterThan(1);
    });
  });

  it("stops a parse that overruns its time and parses the next file on a fresh thread", async () => {
    const parser = make({ timeoutMs: 1 });
    const slow = parser.parse({ bytes: Buffer.from("hello"), fileName: "slow.txt", declaredMimeType: "" });
    await expect(slow).rejects.toBeInstanceOf(TooLargeError);
    await expect(slow).rejects.toThrow(/slow\.txt took longer than 1 ms \(QUARRY_PARSE_TIMEOUT_MS\)/);
  });

  it("fails a parse that exceeds the thread's heap limit, naming the limit, and recovers", async () => {
    const parser = make({ memoryMb: 48 });
    // 10 MB of JSON array: five million elements, then five million "[i]: 1" lines, far over 48 MB of heap.
    const huge = Buffer.from(`[${"1,".repeat(5_000_000)}1]`);
    const failure = parser.parse({ bytes: huge, fileName: "huge.json", declaredMimeType: "" });
    await expect(failure).rejects.toBeInstanceOf(TooLargeError);
    await expect(failure).rejects.toThrow(/huge\.json needed more than 48 MB of memory \(QUARRY_PARSE_MEMORY_MB\)/);
    const next = await parser.parse({ bytes: Buffer.from("# Title\n\nsmall file"), fileName: "small.md", declaredMimeType: "" });
    expect(next.text).toContain("small file");
  });
});
