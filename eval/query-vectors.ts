// The questions' vectors with a base's model, embedded once per cache folder: the offline studies of
// a kept base (offline-lists.ts, document-vector-study.ts) re-score many times.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_MODEL } from "../lib/models/model-catalog.ts";
import { defaultModelDir, OnnxEmbedder, WHOLE_BY_DEFAULT } from "../services/embedder/index.ts";

export interface QueryVectorOptions {
  model?: string;
  /** Read a question longer than the model's input whole (windows, averaged) rather than cut it; default as the embedder. */
  whole?: boolean;
  threads?: number;
}

export async function cachedQueryVectors(cacheDir: string, texts: readonly string[], dimension: number, options: QueryVectorOptions = {}): Promise<Float32Array[]> {
  const model = options.model ?? DEFAULT_MODEL;
  const whole = options.whole ?? WHOLE_BY_DEFAULT.includes("query");
  const file = join(cacheDir, `query-vectors-${model}-${whole ? "whole" : "cut"}-${texts.length}.f32`);
  const cached = await readFile(file).catch(() => undefined);
  if (cached) {
    const all = new Float32Array(cached.buffer.slice(cached.byteOffset, cached.byteOffset + cached.byteLength));
    return texts.map((_, i) => all.subarray(i * dimension, (i + 1) * dimension));
  }
  const embedder = await OnnxEmbedder.load(defaultModelDir(model), { threads: options.threads ?? 1, readWhole: whole ? ["query"] : [] });
  try {
    const vectors = await embedder.embed([...texts], "query");
    const all = new Float32Array(texts.length * dimension);
    vectors.forEach((v, i) => all.set(v, i * dimension));
    await writeFile(file, new Uint8Array(all.buffer));
    return vectors;
  } finally {
    await embedder.close();
  }
}
