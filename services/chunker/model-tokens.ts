// Chunks are sized in the tokens of the model that will embed them, and each knowledge base has its
// own model: bge-small-zh reads 512 tokens of a 21,128-piece Chinese vocabulary, MiniLM 256 of
// BERT's English one. This finds, once per model, its tokenizer (from its installed folder) and
// its input limit (from the embedder).
import { existsSync } from "node:fs";
import { join } from "node:path";

export interface ModelTokens {
  /** The folder with the model's tokenizer.json; chunking threads load it (once per thread). */
  tokenizerDir: string;
  /** The model's input limit, special tokens included. */
  maxInputTokens: number;
}

export interface ModelTokensOptions {
  /** Where local models are installed, one folder per model name. */
  modelsDir: string;
  /** The tokenizer folder for models with no local folder (an OpenAI-compatible endpoint's). */
  fallbackDir: string;
  /** The model's input limit, as the embedder reports it. */
  maxInputTokens(model: string): Promise<number>;
}

/** A cached lookup from a model name ("" for the embedder's default) to its tokenizer and limit. */
export function modelTokens(options: ModelTokensOptions): (model: string) => Promise<ModelTokens> {
  const cache = new Map<string, Promise<ModelTokens>>();
  return (model) => {
    let found = cache.get(model);
    if (!found) {
      found = (async () => {
        const dir = join(options.modelsDir, model);
        const local = model !== "" && existsSync(join(dir, "tokenizer.json"));
        return { tokenizerDir: local ? dir : options.fallbackDir, maxInputTokens: await options.maxInputTokens(model) };
      })();
      cache.set(model, found);
      found.catch(() => cache.delete(model));
    }
    return found;
  };
}
