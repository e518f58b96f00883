// Which embedding model a knowledge base that `quarry ingest` (and `quarry eval-answers`) creates should get, from the text of
// the first files it is given. The rule is the vector gate's: a model whose vectors are noise for
// most of a text (MiniLM reads Latin script only) must not embed it. When Han characters are the
// larger part of the sample's words, the base gets bge-small-zh-v1.5, the model that reads Chinese;
// otherwise the embedder's default, which measured far better on English (docs/EVALUATION.md).
import { readFile } from "node:fs/promises";
import { extname } from "node:path";

export const CHINESE_MODEL = "bge-small-zh-v1.5";

/** Files whose bytes are their text, so a sample needs no parser. */
const TEXT_EXTENSIONS = new Set([".txt", ".md", ".markdown", ".html", ".htm", ".csv", ".tsv", ".json"]);
const SAMPLE_BYTES = 64 * 1024;
const SAMPLE_FILES = 20;

export interface ModelChoice {
  /** Empty: the embedder's default. */
  model: string;
  /** Share (0..1) of the sample's words that are Han characters; undefined when nothing could be read. */
  hanShare?: number;
}

/** Han characters (each a word piece to a Chinese model) against Latin-script words. */
export function hanShare(text: string): number | undefined {
  const han = text.match(/\p{Script=Han}/gu)?.length ?? 0;
  const latinWords = text.match(/\p{Script=Latin}+/gu)?.length ?? 0;
  return han + latinWords === 0 ? undefined : han / (han + latinWords);
}

export function chooseModelForText(text: string): ModelChoice {
  const share = hanShare(text);
  return { model: share !== undefined && share > 0.5 ? CHINESE_MODEL : "", hanShare: share };
}

/** Samples the first text files (binary formats need the parser, so they are left out). */
export async function chooseModelForFiles(files: string[]): Promise<ModelChoice> {
  const texts: string[] = [];
  for (const file of files.filter((f) => TEXT_EXTENSIONS.has(extname(f).toLowerCase())).slice(0, SAMPLE_FILES)) {
    texts.push((await readFile(file)).subarray(0, SAMPLE_BYTES).toString("utf8"));
  }
  return chooseModelForText(texts.join("\n"));
}
