import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../lib/errors.ts";
import { fixtureBytes } from "../../test/fixtures/fixture-documents.ts";
import { CHINESE_NOTES_MARKDOWN, ENGLISH_PROSE } from "../../test/fixtures/fixture-texts.ts";
import { decodeText } from "./encoding.ts";

const enc = (text: string, encoding: string) => new Uint8Array(iconv.encode(text, encoding));

const CHINESE = "分布式训练技术原理。数据并行是最常见的并行方式，每块GPU上维护一个模型副本，并通过集体通信同步梯度。这种方法大大降低了峰值内存消耗。";

describe("decodeText", () => {
  it("reads UTF-8 without a BOM, including a Chinese file", async () => {
    const { text, encoding } = decodeText(await fixtureBytes("notes-zh.md"));
    expect(encoding).toBe("UTF-8");
    expect(text.startsWith("# 家庭养蜂要点\n")).toBe(true);
    expect(text).toBe(CHINESE_NOTES_MARKDOWN);
  });

  it("reads the Chinese notes saved as GB18030 and the English prose saved as UTF-16LE with a BOM", async () => {
    expect(decodeText(await fixtureBytes("notes-zh-gb18030.txt"))).toEqual({ text: CHINESE_NOTES_MARKDOWN, encoding: "GB18030" });
    expect(decodeText(await fixtureBytes("prose-utf16.txt"))).toEqual({ text: ENGLISH_PROSE, encoding: "UTF-16LE" });
  });

  it("strips a UTF-8 BOM", () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("héllo")]);
    expect(decodeText(bytes)).toEqual({ text: "héllo", encoding: "UTF-8" });
  });

  it("reads UTF-16LE and UTF-16BE with a BOM", () => {
    const text = "Grüße, 世界\nline two";
    const le = new Uint8Array([0xff, 0xfe, ...enc(text, "utf-16le")]);
    const be = new Uint8Array([0xfe, 0xff, ...enc(text, "utf-16be")]);
    expect(decodeText(le)).toEqual({ text, encoding: "UTF-16LE" });
    expect(decodeText(be)).toEqual({ text, encoding: "UTF-16BE" });
  });

  it("recognises UTF-16LE saved without a BOM instead of calling it binary", () => {
    const text = "Plain English text written by a Windows tool without a byte order mark.";
    expect(decodeText(enc(text, "utf-16le"))).toEqual({ text, encoding: "UTF-16LE" });
  });

  it("detects GB18030 (GBK) Chinese and decodes it", () => {
    const result = decodeText(enc(CHINESE, "gb18030"));
    expect(result).toEqual({ text: CHINESE, encoding: "GB18030" });
  });

  it("detects Big5, Shift_JIS and windows-1252", () => {
    const big5 = "繁體中文的文字，這是用來測試字元編碼偵測的句子，包含了許多常見的漢字與標點符號。";
    const sjis = "日本語のテキストです。これは文字コードの判定を試すための文章で、ひらがなとカタカナと漢字が含まれています。";
    const latin = "Café crème, naïve façade — déjà vu à Zürich. Les élèves étudient très sérieusement.";
    expect(decodeText(enc(big5, "big5"))).toEqual({ text: big5, encoding: "Big5" });
    expect(decodeText(enc(sjis, "shift_jis"))).toEqual({ text: sjis, encoding: "Shift_JIS" });
    expect(decodeText(enc(latin, "windows-1252"))).toEqual({ text: latin, encoding: "windows-1252" });
  });

  it("normalises CRLF and CR line endings to LF", () => {
    expect(decodeText(new TextEncoder().encode("a\r\nb\rc\n")).text).toBe("a\nb\nc\n");
  });

  it("refuses empty and whitespace-only files", () => {
    expect(() => decodeText(new Uint8Array())).toThrow(new InvalidInputError("the file is empty"));
    expect(() => decodeText(new TextEncoder().encode(" \r\n\t \n"))).toThrow(new InvalidInputError("the file is empty"));
    expect(() => decodeText(new Uint8Array([0xff, 0xfe]))).toThrow(InvalidInputError);
  });

  it("refuses binary data, naming the reason", async () => {
    const docx = await fixtureBytes("canal-boating.docx");
    const nul = new Uint8Array(4000).map((_, i) => (i % 7 === 0 ? 0 : 65 + (i % 26)));
    expect(() => decodeText(nul)).toThrow(/^not valid text: it looks like binary data \(\d+ NUL bytes/);
    expect(() => decodeText(docx)).toThrow(/^not valid text: it looks like binary data/);
  });

  it("refuses a BOM followed by bytes that are not valid in that encoding", () => {
    const loneSurrogate = new Uint8Array([0xff, 0xfe, 0x00, 0xd8, 0x61, 0x00]);
    expect(() => decodeText(loneSurrogate)).toThrow(new InvalidInputError("not valid text: the bytes are not valid UTF-16LE"));
  });

  it("drops a few stray NULs rather than refusing the file", () => {
    const bytes = new TextEncoder().encode(`${"readable text ".repeat(300)}\0end`);
    expect(decodeText(bytes).text.endsWith("text end")).toBe(true);
  });
});

describe("decodeText on random bytes", () => {
  /** xorshift32: the same bytes on every run. */
  function randomFiles(count: number, size: number, seed: number): Uint8Array[] {
    let x = seed;
    const next = () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) & 0xff;
    };
    return Array.from({ length: count }, () => Uint8Array.from({ length: size }, next));
  }

  it("refuses small random files as binary, where a single-byte code page used to read them as text", () => {
    for (const size of [32, 64, 100, 500, 4096]) {
      const accepted = randomFiles(100, size, size * 7919 + 1).filter((bytes) => {
        try {
          decodeText(bytes);
          return true;
        } catch (error) {
          expect((error as Error).message).toMatch(/^not valid text/);
          return false;
        }
      });
      // Before the check 49 of 100 32-byte files and 14 of 100 64-byte files decoded as windows-125x and the like.
      expect(accepted.length, `${size}-byte random files read as text`).toBeLessThanOrEqual(size <= 64 ? 3 : 0);
    }
  });

  it("still reads short legacy-encoded text", () => {
    expect(decodeText(iconv.encode("Größe: 12 m², Preis 5 €", "windows-1252")).encoding).toBe("windows-1252");
    expect(decodeText(iconv.encode("Привет, как дела? Всё хорошо, спасибо.", "windows-1251")).text).toBe("Привет, как дела? Всё хорошо, спасибо.");
  });
});
