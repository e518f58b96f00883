// How much of a text a word-piece model actually reads: the share of its word pieces that are in
// its vocabulary (not the unknown token) and written in a script the model was trained on,
// punctuation left out. Used to tell when a query's vector means nothing.
//
// Vocabulary alone is not enough: MiniLM inherits BERT's vocabulary, which holds a few thousand Han
// characters, but it was trained on English sentence pairs only. On CMRC 2018 the vocabulary
// check passed 65 of 1,000 Chinese questions (e.g. 圣保罗堂区成立于哪年？ read as 60 % known), and
// their vectors, noise to the model, pulled hybrid below BM25. The model's scripts come from its
// manifest (quarry-model.json), i.e. from its model card, not from a tuned threshold.
//
// Only word pieces with letters are judged: digits and signs belong to every script (Unicode's
// "Common"), so "视力+0.5" says nothing about whether the model reads Chinese; counted as read,
// its two number pieces made a half-unreadable question look readable. A text of numbers alone
// is read (an English model handles them), one of punctuation alone is not (nothing to read).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { ConfigError } from "../../lib/config.ts";
import { FailedPreconditionError } from "../../lib/errors.ts";

const PUNCTUATION_ONLY = /^[^\p{L}\p{N}]+$/u;
const LETTERS = /\p{L}/gu;
const HAS_LETTER = /\p{L}/u;

export interface KnownTokenShareOptions {
  unknownToken?: string;
  /**
   * Unicode script names (as in \p{Script=…}) the model was trained to read, e.g. ["Latin"]. A
   * word piece with a letter outside them does not count as read. Absent: any script.
   */
  scripts?: readonly string[];
}

/** Builds a test for "every letter of this word piece is in one of the scripts"; validates the names. */
export function scriptTest(scripts: readonly string[] | undefined): (token: string) => boolean {
  if (!scripts || scripts.length === 0) return () => true;
  let inScripts: RegExp;
  try {
    inScripts = new RegExp(`^(?:${scripts.map((s) => `\\p{Script=${s}}`).join("|")})$`, "u");
  } catch {
    throw new ConfigError(`unknown Unicode script among ${scripts.join(", ")}; use names such as Latin, Han, Cyrillic`);
  }
  return (token) => (token.match(LETTERS) ?? []).every((letter) => inScripts.test(letter));
}

export class KnownTokenShare {
  readonly #tokenizer: Tokenizer;
  readonly #unknown: string;
  readonly #inScripts: (token: string) => boolean;

  constructor(tokenizer: Tokenizer, options: KnownTokenShareOptions = {}) {
    this.#tokenizer = tokenizer;
    this.#unknown = options.unknownToken ?? "[UNK]";
    this.#inScripts = scriptTest(options.scripts);
  }

  /** Word pieces of the text, no special tokens, before any truncation. */
  count(text: string): number {
    return this.#tokenizer.encode(text, { add_special_tokens: false }).ids.length;
  }

  /** The tokenizer of a model folder, with the scripts its quarry-model.json declares (if any). */
  static fromModelDir(dir: string): KnownTokenShare {
    const files = ["tokenizer.json", "tokenizer_config.json"].map((f) => join(dir, f));
    if (!files.every(existsSync)) throw new FailedPreconditionError(`the embedder's tokenizer is not in ${dir}; run \`npm run setup\``);
    const [json, config] = files.map((f) => JSON.parse(readFileSync(f, "utf8")) as { model?: { unk_token?: string } });
    const manifestFile = join(dir, "quarry-model.json");
    const manifest = existsSync(manifestFile) ? (JSON.parse(readFileSync(manifestFile, "utf8")) as { scripts?: string[] }) : {};
    return new KnownTokenShare(new Tokenizer(json, config), { unknownToken: json.model?.unk_token, scripts: manifest.scripts });
  }

  of(text: string): number {
    const tokens = this.#tokenizer.encode(text, { add_special_tokens: false }).tokens.filter((t: string) => !PUNCTUATION_ONLY.test(t));
    if (tokens.length === 0) return 0;
    // [UNK] stands for letters the vocabulary lacks, so it is judged (and fails) like a word.
    const judged = tokens.filter((t: string) => t === this.#unknown || HAS_LETTER.test(t));
    if (judged.length === 0) return 1;
    return judged.filter((t: string) => t !== this.#unknown && this.#inScripts(t)).length / judged.length;
  }
}
