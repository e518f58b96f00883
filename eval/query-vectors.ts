// The questions' vectors with the default model, embedded once per cache folder: the offline
// studies of a kept base (offline-lists.ts, document-vector-study.ts) re-score many times.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { defaultModelDir, OnnxEmbedder } from "../services/embedder/onnx-embedder.ts";

export async function cachedQueryVectors(cacheDir: string, texts: readonly string[], dimension: number, threads = 1): Promise<Float32Array[]> {
  const file = join(cacheDir, `query-vectors-${texts.length}.f32`);
  const cached = await readFile(file).catch(() => undefined);
  if (cached) {
    const all = new Float32Array(cached.buffer.slice(cached.byteOffset, cached.byteOffset + cached.byteLength));
    return texts.map((_, i) => all.subarray(i * dimension, (i + 1) * dimension));
  }
  const embedder = await OnnxEmbedder.load(defaultModelDir(), { threads });
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
