// The one rule for what Quarry reads, as the parser, the gateway's upload check and folder ingest
// apply it: what is refused (with which reason) and what is read, with Tika configured or not.
import { describe, expect, it } from "vitest";
import { FailedPreconditionError, InvalidInputError } from "../../lib/errors.ts";
import { BUILTIN_FORMATS } from "./builtin-formats.ts";
import { applyReadingRule, checkReadable, readableFormats } from "./reading-rule.ts";

const bytes = (...values: number[]) => new Uint8Array(values);
const text = (s: string) => new TextEncoder().encode(s);
const refusalOf = (content: Uint8Array, fileName: string, tika = false) => {
  const outcome = applyReadingRule({ bytes: content, fileName, declaredMimeType: "" }, tika);
  return "refusal" in outcome ? outcome.refusal : undefined;
};

describe("the reading rule", () => {
  it("lists exactly the registered parsers' formats, and with Tika every known one", () => {
    const builtin = readableFormats(false);
    expect(new Set(builtin.map((f) => f.format))).toEqual(BUILTIN_FORMATS);
    expect(builtin.find((f) => f.format === "svg")).toMatchObject({ name: "SVG drawing", mimeType: "image/svg+xml", extensions: ["svg"] });
    expect(builtin.find((f) => f.format === "markdown")?.extensions).toEqual(["md", "markdown", "mdx"]);
    const withTika = readableFormats(true).map((f) => f.format);
    expect(withTika).toEqual(expect.arrayContaining(["docx", "epub", "png", "pdf", "svg"]));
    expect(withTika).not.toContain("binary");
  });

  it("refuses the 1–7 byte binaries issue 23 found READY as text, a lone 0x1a byte first", () => {
    expect(refusalOf(bytes(0x1a), "sub.txt")?.message).toBe("sub.txt is not text, though it is named or looks like a plain text: 1 of its 1 characters are control codes");
    const junk = [bytes(0x1a), bytes(0x01, 0x02), bytes(0x9f, 0xe3, 0x11), bytes(0xc3, 0x28, 0xa0, 0xff), bytes(0x7f, 0x41, 0x05, 0x06, 0x07), bytes(0xfe, 0xed, 0xfa, 0xce, 0x07, 0x00), bytes(0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86)];
    for (const content of junk) {
      const refusal = refusalOf(content, "blob");
      expect(refusal, `${[...content].map((b) => b.toString(16))}`).toBeInstanceOf(InvalidInputError);
      expect(refusal?.message).toMatch(/^blob is not (text|a document Quarry reads)/);
    }
  });

  it("refuses a file mostly of control bytes, even named .md, and one of no readable characters", () => {
    const noisy = new Uint8Array(2000).map((_, i) => (i % 3 === 0 ? 0x07 : 0x41));
    expect(refusalOf(noisy, "notes.md")?.message).toMatch(/^notes\.md is not text, though it is named or looks like a Markdown document: 667 of its 2000 characters are control codes$/);
    expect(refusalOf(text(" \n\t \n"), "blank.txt")?.message).toMatch(/holds no readable characters/);
  });

  it("refuses a text-like file whose extension names no format Quarry reads (a 20-byte tool.exe)", () => {
    const refusal = refusalOf(text("MZ this is a stub.\n"), "tool.exe");
    expect(refusal).toBeInstanceOf(InvalidInputError);
    expect(refusal?.message).toMatch(/^tool\.exe: Quarry does not read \.exe files \(it reads \.pdf .*\)$/);
    for (const extension of [".txt", ".md", ".svg", ".json"]) expect(refusal?.message).toContain(` ${extension} `);
  });

  it("reads text in every encoding the decoder takes, and a file without an extension by its content", () => {
    expect(refusalOf(text("Granite is an igneous rock.\n"), "README")).toBeUndefined();
    expect(refusalOf(text("数据并行：每块GPU上维护一个模型副本。"), "notes-zh.txt")).toBeUndefined();
    const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from("Tides turn twice a day.", "utf16le")]);
    expect(refusalOf(utf16, "tides.txt")).toBeUndefined();
    expect(refusalOf(new Uint8Array(Buffer.from("Caf\xe9 cr\xe8me, na\xefve fa\xe7ade and r\xe9sum\xe9.", "latin1")), "menu.txt")).toBeUndefined();
    expect(refusalOf(text("log line \x1b[31mred\x1b[0m\n"), "run.log")).toBeUndefined();
    // A UTF-8 character cut at the head's end is not the file's fault.
    const long = text(`${"é".repeat(40_000)}`);
    expect(refusalOf(long, "accents.txt")).toBeUndefined();
  });

  it("refuses a format only Tika reads when it is not configured, and reads it when it is", () => {
    const pdfLike = text("%PDF-1.7\n");
    expect(refusalOf(pdfLike, "report.v2")).toBeUndefined(); // the signature decides, whatever the name
    const png = bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0);
    const refusal = refusalOf(png, "scan.png");
    expect(refusal).toBeInstanceOf(FailedPreconditionError);
    expect(refusal?.message).toMatch(/^scan\.png is a PNG image \(image\/png\); it reads .* — configure TIKA_URL/);
    expect(refusalOf(png, "scan.png", true)).toBeUndefined();
    expect(refusalOf(bytes(0, 1, 2, 3, 0, 0, 5, 6, 0, 0), "data", true)?.message).toMatch(/^data is not a document Quarry reads: it is binary data/);
  });

  it("is a check that throws the refusal and names the format otherwise", () => {
    expect(checkReadable({ bytes: text("<svg><text>x</text></svg>"), fileName: "chart.svg", declaredMimeType: "" }, false).name).toBe("SVG drawing");
    expect(() => checkReadable({ bytes: new Uint8Array(), fileName: "e.txt", declaredMimeType: "" }, false)).toThrow(new InvalidInputError("the file is empty"));
  });
});
