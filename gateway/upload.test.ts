import { describe, expect, it } from "vitest";
import { InvalidInputError, TooLargeError } from "../lib/errors.ts";
import { checkUpload } from "./upload.ts";

const limits = { maxUploadBytes: 10, inlineMaxBytes: 5 };
const input = (fileName: string, size: number) => ({ knowledgeBase: "kb", fileName, mimeType: "", metadata: {}, content: new Uint8Array(size) });

describe("checkUpload", () => {
  it("keeps a relative path as the name, without . and .. segments, and an absolute path's base name", () => {
    expect(checkUpload(input("intro/README.md", 3), limits)).toBe("intro/README.md");
    expect(checkUpload(input("api\\README.md", 3), limits)).toBe("api/README.md");
    expect(checkUpload(input("../../etc/./passwd", 3), limits)).toBe("etc/passwd");
    expect(checkUpload(input("/home/me/notes.txt", 3), limits)).toBe("notes.txt");
    expect(checkUpload(input("C:\\Users\\me\\report.pdf", 3), limits)).toBe("report.pdf");
    expect(() => checkUpload(input("../..", 3), limits)).toThrow(InvalidInputError);
  });

  it("refuses an empty file, a missing name and an oversize file with messages that say why", () => {
    expect(() => checkUpload(input("a.txt", 0), limits)).toThrow(new InvalidInputError("a.txt is empty (0 bytes): there is nothing to ingest"));
    expect(() => checkUpload(input("  ", 3), limits)).toThrow(InvalidInputError);
    expect(() => checkUpload(input("big.pdf", 11), limits)).toThrow(TooLargeError);
    expect(() => checkUpload(input("big.pdf", 11), limits)).toThrow(/11 bytes; the upload limit is 10 bytes/);
  });
});
