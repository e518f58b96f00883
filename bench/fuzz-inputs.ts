// A seeded generator of hostile uploads for the fuzz suite and `quarry bench fuzz`: random bytes
// under every extension Quarry knows, truncated, bit-flipped and overwritten PDFs and Word files,
// absurd nesting in every structured text format, invalid UTF-8, text in one encoding labelled as
// another, and runs without a single separator. The same seed gives the same inputs, so any
// failure it finds is rebuilt from (seed, index).
import iconv from "iconv-lite";
import { generatedDocx, generatedPdf, patchedBytes } from "../lib/testing/generated-documents.ts";

export interface FuzzInput {
  index: number;
  /** The recipe, e.g. "pdf-bitflip"; the report counts outcomes per kind. */
  kind: string;
  fileName: string;
  mimeType: string;
  content: Uint8Array;
}

/** Real documents the damaging recipes start from. */
export interface FuzzSeeds {
  pdfs: Uint8Array[];
  docx: Uint8Array[];
}

const EXTENSIONS = [
  "txt", "md", "markdown", "html", "htm", "xml", "csv", "tsv", "json", "log", "pdf",
  "docx", "xlsx", "pptx", "odt", "ods", "odp", "epub", "zip", "doc", "xls", "ppt", "msg", "rtf",
  "png", "jpg", "gif", "tif", "bmp", "webp", "",
];

const SAMPLE_TEXTS = [
  "The quarry ships granite blocks to the harbour every morning; the crane lifts twelve tonnes.",
  "分布式训练技术原理。数据并行是最常见的并行方式，每块GPU上维护一个模型副本。",
  "Привет! Карьер отправляет гранит в порт каждое утро, кран поднимает двенадцать тонн.",
  "日本語のテキストです。これは文字コードの判定を試すための文章です。",
  "Café crème, naïve façade — déjà vu à Zürich. Größe: 12 m², Preis 5 €.",
];

const LEGACY = ["gb18030", "shift_jis", "windows-1251", "koi8-r", "windows-1252", "big5", "utf-16le", "utf-16be"];

/** Small, fast, good enough: mulberry32. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => Math.floor(next() * 256));
  return { next, int, pick, bytes };
}

type Rng = ReturnType<typeof prng>;
type Recipe = (rng: Rng, seeds: FuzzSeeds) => { ext: string; content: Uint8Array; mimeType?: string };

const encode = (text: string) => new TextEncoder().encode(text);

function flipBits(bytes: Uint8Array, rng: Rng, flips: number): Uint8Array {
  const out = new Uint8Array(bytes);
  for (let i = 0; i < flips; i++) out[rng.int(0, out.length - 1)] ^= 1 << rng.int(0, 7);
  return out;
}

function nested(rng: Rng, open: string, close: string, inner = "x", depths = [1_000, 10_000, 50_000, 120_000]): string {
  const depth = rng.pick(depths);
  return open.repeat(depth) + inner + close.repeat(rng.next() < 0.7 ? depth : rng.int(0, depth));
}

const RECIPES: Record<string, Recipe> = {
  "random-bytes": (rng) => ({ ext: rng.pick(EXTENSIONS), content: rng.bytes(rng.pick([rng.int(1, 16), rng.int(17, 256), rng.int(257, 8192)])) }),
  "pdf-truncated": (rng, s) => {
    const pdf = rng.pick(s.pdfs);
    return { ext: "pdf", content: pdf.subarray(0, rng.int(1, pdf.length - 1)) };
  },
  "pdf-bitflip": (rng, s) => ({ ext: "pdf", content: flipBits(rng.pick(s.pdfs), rng, rng.int(1, 64)) }),
  "pdf-patched": (rng, s) => ({
    ext: "pdf",
    content: patchedBytes(rng.pick(s.pdfs), rng.int(1, 1 << 30), { patches: rng.int(1, 6), length: rng.int(10, 200), fill: rng.next() < 0.5 ? rng.pick([0x29, 0x28, 0x3c, 0x3e, 0x5b, 0x00]) : undefined }),
  }),
  "docx-truncated": (rng, s) => {
    const docx = rng.pick(s.docx);
    return { ext: "docx", content: docx.subarray(0, rng.int(1, docx.length - 1)) };
  },
  "docx-bitflip": (rng, s) => ({ ext: "docx", content: flipBits(rng.pick(s.docx), rng, rng.int(1, 32)) }),
  "deep-json": (rng) => ({ ext: "json", content: encode(rng.next() < 0.5 ? nested(rng, "[", "]", "1") : nested(rng, '{"a":', "}", "1")) }),
  "deep-html": (rng) => ({ ext: "html", content: encode(`<html><body>${nested(rng, "<div><span>", "</span></div>", "text")}</body></html>`) }),
  // Markdown has no nesting to refuse: 120,000 ">" are text (800 chunks to embed), so the quotes stay
  // shallower; nested lists indent each level further, so their size grows with the square of the depth.
  "deep-markdown": (rng) => ({
    ext: "md",
    content: encode(rng.next() < 0.5 ? nested(rng, ">", "", " quoted", [100, 1_000, 5_000]) : Array.from({ length: rng.int(20, 200) }, (_, i) => `${"  ".repeat(i)}- item ${i}`).join("\n")),
  }),
  "deep-xml": (rng) => ({ ext: "xml", content: encode(`<?xml version="1.0"?>${nested(rng, "<a>", "</a>", "v")}`) }),
  "invalid-utf8": (rng) => {
    const text = encode(Array.from({ length: rng.int(1, 20) }, () => rng.pick(SAMPLE_TEXTS)).join("\n"));
    const bad = [[0xc3, 0x28], [0xff], [0xfe], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xe2, 0x82], [0xf0, 0x28, 0x8c, 0x28], [0x80]];
    const out = [...text];
    for (let i = rng.int(1, 12); i > 0; i--) out.splice(rng.int(0, out.length), 0, ...rng.pick(bad));
    return { ext: rng.pick(["txt", "md", "csv", "json", "html"]), content: Uint8Array.from(out) };
  },
  mislabelled: (rng) => {
    const text = Array.from({ length: rng.int(1, 30) }, () => rng.pick(SAMPLE_TEXTS)).join(rng.pick(["\n", " ", "\r\n", "\n\n"]));
    const encoding = rng.pick(LEGACY);
    const bom = encoding.startsWith("utf-16") && rng.next() < 0.5;
    const body = new Uint8Array(iconv.encode(text, encoding, { addBOM: bom }));
    return { ext: rng.pick(["txt", "csv", "json", "md", "pdf", "docx", "html"]), content: body, mimeType: rng.pick(["text/plain; charset=utf-8", "application/json", "application/pdf", ""]) };
  },
  "wrong-extension": (rng, s) => {
    const content = rng.pick([rng.pick(s.pdfs), rng.pick(s.docx), encode(rng.pick(SAMPLE_TEXTS))]);
    return { ext: rng.pick(["txt", "pdf", "docx", "json", "csv", "png"]), content, mimeType: rng.pick(["", "text/plain", "application/pdf", "image/png"]) };
  },
  // One token per character for "字" and "é", one per ten for a run read as [UNK]: similar chunk counts.
  "no-separators": (rng) => {
    const [unit, most] = rng.pick([["x", 50_000], ["ab", 25_000], ["字", 5_000], ["é", 5_000]] as const);
    return { ext: rng.pick(["txt", "md", "csv"]), content: encode(unit.repeat(rng.int(100, most))) };
  },
  "control-characters": (rng) => {
    const text = encode(rng.pick(SAMPLE_TEXTS).repeat(rng.int(1, 40)));
    for (let i = rng.int(1, 40); i > 0; i--) text[rng.int(0, text.length - 1)] = rng.int(0, 31);
    return { ext: rng.pick(["txt", "md", "csv", "tsv", "json"]), content: text };
  },
};

export const FUZZ_KINDS = Object.keys(RECIPES);

/** The seed documents: generated PDFs of one to four pages and generated Word files. */
export async function fuzzSeeds(): Promise<FuzzSeeds> {
  const pdfs = await Promise.all([generatedPdf(1, 10), generatedPdf(2, 30), generatedPdf(4, 30)]);
  const docx = await Promise.all([generatedDocx(SAMPLE_TEXTS), generatedDocx(Array.from({ length: 40 }, (_, i) => `${i}: ${SAMPLE_TEXTS[i % SAMPLE_TEXTS.length]}`))]);
  return { pdfs, docx };
}

export function* fuzzInputs(seed: number, count: number, seeds: FuzzSeeds): Generator<FuzzInput> {
  const rng = prng(seed);
  for (let index = 0; index < count; index++) {
    // Round robin over the recipes, so even a short run covers each of them.
    const kind = FUZZ_KINDS[index % FUZZ_KINDS.length];
    const { ext, content, mimeType = "" } = RECIPES[kind](rng, seeds);
    yield { index, kind, fileName: `fuzz-${seed}-${index}-${kind}${ext ? `.${ext}` : ""}`, mimeType, content };
  }
}
