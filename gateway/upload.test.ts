import { describe, expect, it } from "vitest";
import { InvalidInputError, TooLargeError } from "../lib/errors.ts";
import { checkUpload } from "./upload.ts";

const limits = { maxUploadBytes: 10, inlineMaxBytes: 5, blobDir: "/tmp" };
const input = (fileName: string, size: number) => ({ knowledgeBase: "kb", fileName, mimeType: "", metadata: {}, content: new Uint8Array(size) });

describe("checkUpload", () => {
  it("keeps only the base name, so an upload cannot name a path", () => {
    expect(checkUpload(input("../../etc/passwd", 3), limits)).toBe("passwd");
    expect(checkUpload(input("C:\\Users\\me\\report.pdf", 3), limits)).toBe("report.pdf");
  });

  it("refuses an empty file, a missing name and an oversize file with messages that say why", () => {
    expect(() => checkUpload(input("a.txt", 0), limits)).toThrow(new InvalidInputError("a.txt is empty (0 bytes): there is nothing to ingest"));
    expect(() => checkUpload(input("  ", 3), limits)).toThrow(InvalidInputError);
    expect(() => checkUpload(input("big.pdf", 11), limits)).toThrow(TooLargeError);
    expect(() => checkUpload(input("big.pdf", 11), limits)).toThrow(/11 bytes; the upload limit is 10 bytes/);
  });
});
