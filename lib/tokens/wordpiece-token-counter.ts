import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { FailedPreconditionError } from "../errors.ts";
import type { TokenCounter } from "./tokenizer.ts";

const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json"] as const;

/**
 * Counts word pieces with the embedding model's own tokenizer, so a chunk of N counted tokens is
 * exactly N + specials for the model. Measured on this machine: about 0.4 s per MB of English and
 * 1.4 s per MB of Chinese (every CJK character is its own token), so callers count each piece of
 * text a small constant number of times and never per prefix.
 */
export class WordPieceTokenCounter implements TokenCounter {
  readonly #tokenizer: Tokenizer;

  constructor(tokenizerJson: object, tokenizerConfig: object) {
    this.#tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
  }

  /** Loads tokenizer.json and tokenizer_config.json from an installed model folder. */
  static fromModelDir(dir: string): WordPieceTokenCounter {
    const missing = TOKENIZER_FILES.filter((file) => !existsSync(join(dir, file)));
    if (missing.length > 0) {
      throw new FailedPreconditionError(
        `the embedding model's tokenizer is not installed: ${missing.join(" and ")} missing in ${dir}; ` +
          "run `npm run setup` to install the local model",
      );
    }
    const [tokenizerJson, tokenizerConfig] = TOKENIZER_FILES.map(
      (file) => JSON.parse(readFileSync(join(dir, file), "utf8")) as object,
    );
    return new WordPieceTokenCounter(tokenizerJson, tokenizerConfig);
  }

  count(text: string): number {
    if (text.length === 0) return 0;
    return this.#tokenizer.encode(text, { add_special_tokens: false }).ids.length;
  }

  /** Tokens the model wraps around every input ([CLS] and [SEP] for BERT-style models). */
  specialTokenCount(): number {
    return this.#tokenizer.encode("", { add_special_tokens: true }).ids.length;
  }
}
