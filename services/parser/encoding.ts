// Turns the bytes of an uploaded text file into a string. Uploads come from everywhere: UTF-8 with
// or without a BOM, UTF-16 from Windows tools, GB18030/Big5 from Chinese systems, Shift_JIS,
// Latin-1 and the Windows code pages. A wrong guess silently corrupts retrieval, so anything that
// is not clearly text is refused with the reason instead.
import chardet from "chardet";
import iconv from "iconv-lite";
import { InvalidInputError } from "../../lib/errors.ts";

export interface DecodedText {
  /** The text with "\n" line endings and no BOM. */
  text: string;
  /** The encoding it was read as, e.g. "UTF-8", "UTF-16LE", "GB18030". */
  encoding: string;
}

// How much of a large file the binary check and chardet look at; enough to be representative.
const SAMPLE_BYTES = 64 * 1024;

// chardet guesses among many encodings; these are the ones we trust it for. ISO-2022 and the
// UTF-32 family are left out: a file in them is rare enough that a misdetection is likelier.
const LEGACY_ENCODINGS = new Map<string, string>([
  ["GB18030", "gb18030"], // chardet's name for the GB2312/GBK family; GB18030 is their superset
  ["Big5", "big5"],
  ["Shift_JIS", "shift_jis"],
  ["EUC-JP", "euc-jp"],
  ["EUC-KR", "euc-kr"],
  ["KOI8-R", "koi8-r"],
  ...[1, 2, 5, 6, 7, 8, 9].map((n): [string, string] => [`ISO-8859-${n}`, `iso-8859-${n}`]),
  ...[0, 1, 2, 3, 4, 5, 6, 7, 8].map((n): [string, string] => [`windows-125${n}`, `windows-125${n}`]),
  ["windows-874", "windows-874"],
]);

// A decoder that replaced more than this share of characters with U+FFFD read the wrong encoding.
const MAX_REPLACEMENT_RATIO = 0.001;

export function decodeText(bytes: Uint8Array): DecodedText {
  if (bytes.length === 0) throw new InvalidInputError("the file is empty");
  const decoded = decodeBytes(bytes);
  const text = decoded.text.replace(/\r\n?/g, "\n");
  if (text.trim() === "") throw new InvalidInputError("the file is empty");
  return { text, encoding: decoded.encoding };
}

function decodeBytes(bytes: Uint8Array): DecodedText {
  const bom = byteOrderMark(bytes);
  if (bom) return { text: strictDecode(bytes.subarray(bom.length), bom.encoding), encoding: bom.encoding };

  const sample = bytes.subarray(0, SAMPLE_BYTES);
  const utf16 = bomlessUtf16(sample);
  if (utf16) return { text: strictDecode(bytes, utf16), encoding: utf16 };
  rejectBinary(sample);

  const utf8 = tryDecode(bytes, "UTF-8");
  // A handful of stray NULs survive the binary check; they would only break storage and search.
  if (utf8 !== undefined) return { text: utf8.replace(/\0/g, ""), encoding: "UTF-8" };
  const legacy = decodeLegacy(bytes, sample);
  rejectUnlikelyText(legacy.text, legacy.encoding);
  return legacy;
}

// Random bytes decode "successfully" in any single-byte code page, and short runs of them often in
// the CJK ones too, so a legacy decoding must also read like text: what real text almost never
// holds (control characters, and non-ASCII symbols such as ¤ ¦ ¨ ¬ ¯ ± ¸ × or box drawing) is
// about a fifth of what random bytes become and under a hundredth of real text (€ £ ° ©).
// Punctuation does not count: source code is full of ASCII punctuation, Chinese of ，。、.
const MAX_UNLIKELY_SHARE = 0.05;
const UNLIKELY = /[\p{Cc}\p{Co}\p{Cn}\ufffd]|(?![\x00-\x7f])\p{S}/u;
const ALLOWED_CONTROLS = new Set(["\t", "\n", "\r", "\f", "\x1b", "\x1a"]);

function rejectUnlikelyText(text: string, encoding: string): void {
  let unlikely = 0;
  let seen = 0;
  for (const char of text.slice(0, SAMPLE_BYTES)) {
    seen++;
    if (UNLIKELY.test(char) && !ALLOWED_CONTROLS.has(char)) unlikely++;
  }
  if (unlikely > Math.max(0, seen * MAX_UNLIKELY_SHARE)) {
    throw new InvalidInputError(
      `not valid text: it looks like binary data (not UTF-8, and read as ${encoding} ${unlikely} of its first ${seen} characters are control codes or stray symbols)`,
    );
  }
}

function byteOrderMark(bytes: Uint8Array): { encoding: string; length: number } | undefined {
  const [a, b, c] = bytes;
  if (a === 0xef && b === 0xbb && c === 0xbf) return { encoding: "UTF-8", length: 3 };
  if (a === 0xff && b === 0xfe) return { encoding: "UTF-16LE", length: 2 };
  if (a === 0xfe && b === 0xff) return { encoding: "UTF-16BE", length: 2 };
  return undefined;
}

/** UTF-16 saved without a BOM: Latin-script text has a NUL in every other byte, on one side only. */
function bomlessUtf16(sample: Uint8Array): string | undefined {
  if (sample.length < 16) return undefined;
  let evenNuls = 0;
  let oddNuls = 0;
  for (let i = 0; i < sample.length; i++) {
    if (sample[i] === 0) {
      if (i % 2 === 0) evenNuls++;
      else oddNuls++;
    }
  }
  const half = sample.length / 2;
  if (oddNuls > half * 0.4 && evenNuls < half * 0.02) return "UTF-16LE";
  if (evenNuls > half * 0.4 && oddNuls < half * 0.02) return "UTF-16BE";
  return undefined;
}

function rejectBinary(sample: Uint8Array): void {
  let nuls = 0;
  let controls = 0;
  for (const byte of sample) {
    if (byte === 0) nuls++;
    // C0 controls other than tab, LF, FF, CR and ESC do not occur in text files.
    else if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0c && byte !== 0x0d && byte !== 0x1b) controls++;
  }
  if (nuls > Math.max(2, sample.length * 0.001)) {
    throw new InvalidInputError(`not valid text: it looks like binary data (${nuls} NUL bytes in the first ${sample.length} bytes)`);
  }
  if (controls > Math.max(4, sample.length * 0.01)) {
    throw new InvalidInputError(`not valid text: it looks like binary data (${controls} control bytes in the first ${sample.length} bytes)`);
  }
}

function strictDecode(bytes: Uint8Array, encoding: string): string {
  const text = tryDecode(bytes, encoding);
  if (text === undefined) throw new InvalidInputError(`not valid text: the bytes are not valid ${encoding}`);
  return text;
}

function tryDecode(bytes: Uint8Array, encoding: string): string | undefined {
  try {
    // ignoreBOM keeps TextDecoder from eating a second BOM; the first one is already cut off.
    return new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function decodeLegacy(bytes: Uint8Array, sample: Uint8Array): DecodedText {
  const candidates = chardet.analyse(sample).filter((match) => LEGACY_ENCODINGS.has(match.name));
  let bestRejected = "";
  for (const candidate of candidates) {
    const text = iconv.decode(bytes, LEGACY_ENCODINGS.get(candidate.name)!);
    const replacements = countReplacements(text);
    if (replacements <= text.length * MAX_REPLACEMENT_RATIO) return { text: text.replace(/\0/g, ""), encoding: candidate.name };
    bestRejected ||= `${candidate.name} leaves ${replacements} undecodable characters`;
  }
  const why = bestRejected || "no known encoding fits";
  throw new InvalidInputError(`not valid text: the bytes are not UTF-8 and ${why}`);
}

function countReplacements(text: string): number {
  let count = 0;
  for (let i = text.indexOf("\ufffd"); i !== -1; i = text.indexOf("\ufffd", i + 1)) count++;
  return count;
}
