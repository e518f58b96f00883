// A large chunks.created (its whole payload read from the blob store, see lib/pipeline/stage-payloads.ts)
// is decoded, and its chunks.embedded encoded, on a worker thread at nice +10: on the main thread a
// 10 MiB document's 16,000 chunks held the event loop while the gateway had calls to answer. One
// thread is enough: only documents above the inline limit come here, one step each.
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { errorFromThread, UnavailableError } from "../../lib/errors.ts";
import type { EmbeddingInputs } from "./embedding-inputs.ts";
import type { PayloadResult, PayloadTask } from "./payload-thread.ts";

export class PayloadThreads {
  readonly #pool = new Piscina<PayloadTask, PayloadResult>({
    filename: fileURLToPath(new URL("./payload-thread-entry.mjs", import.meta.url)),
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: 60_000,
    niceIncrement: 10,
  });

  async inputs(chunksCreated: Uint8Array): Promise<EmbeddingInputs> {
    const result = await this.#run({ kind: "inputs", chunksCreated });
    if (!("inputs" in result)) throw new Error("the payload thread answered an inputs task with bytes");
    return result.inputs;
  }

  /** The encoded chunks.embedded of the event, given each input's vector. */
  async embedded(chunksCreated: Uint8Array, model: string, documentInput: number, vectors: readonly Float32Array[]): Promise<Uint8Array> {
    const dimension = vectors[0]?.length ?? 0;
    const flat = new Float32Array(vectors.length * dimension);
    vectors.forEach((vector, i) => flat.set(vector, i * dimension));
    const result = await this.#run({ kind: "embedded", chunksCreated, model, documentInput, vectors: flat, dimension }, [flat.buffer]);
    if (!("bytes" in result)) throw new Error("the payload thread answered an encoding task without bytes");
    return result.bytes;
  }

  async close(): Promise<void> {
    await this.#pool.destroy();
  }

  async #run(task: PayloadTask, transferList: ArrayBuffer[] = []): Promise<Exclude<PayloadResult, { error: unknown }>> {
    let result: PayloadResult;
    try {
      result = await this.#pool.run(task, { transferList });
    } catch (error) {
      throw new UnavailableError(`the payload thread failed: ${(error as Error).message}`, { cause: error });
    }
    if ("error" in result) throw errorFromThread(result.error);
    return result;
  }
}
