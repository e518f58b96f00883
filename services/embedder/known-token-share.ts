// How much of a text a word-piece model actually reads: the share of its word pieces that are not
// the unknown token, punctuation left out. Used to tell when a query's vector means nothing.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { FailedPreconditionError } from "../../lib/errors.ts";

const PUNCTUATION_ONLY = /^[^\p{L}\p{N}]+$/u;

export class KnownTokenShare {
  readonly #tokenizer: Tokenizer;
  readonly #unknown: string;

  constructor(tokenizer: Tokenizer, unknownToken = "[UNK]") {
    this.#tokenizer = tokenizer;
    this.#unknown = unknownToken;
  }

  static fromModelDir(dir: string): KnownTokenShare {
    const files = ["tokenizer.json", "tokenizer_config.json"].map((f) => join(dir, f));
    if (!files.every(existsSync)) throw new FailedPreconditionError(`the embedder's tokenizer is not in ${dir}; run \`npm run setup\``);
    const [json, config] = files.map((f) => JSON.parse(readFileSync(f, "utf8")) as { model?: { unk_token?: string } });
    return new KnownTokenShare(new Tokenizer(json, config), json.model?.unk_token);
  }

  of(text: string): number {
    const tokens = this.#tokenizer.encode(text, { add_special_tokens: false }).tokens.filter((t: string) => !PUNCTUATION_ONLY.test(t));
    if (tokens.length === 0) return 0;
    return tokens.filter((t: string) => t !== this.#unknown).length / tokens.length;
  }
}
