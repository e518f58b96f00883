// The worker-thread side of ThreadedEmbedder: loads the ONNX model and answers embed requests.
// onnxruntime-node runs a session synchronously on the calling thread, so on the main thread one
// batch would stall every RPC of the process for seconds.
import { parentPort, workerData } from "node:worker_threads";
import { OnnxEmbedder, type OnnxEmbedderOptions } from "./onnx-embedder.ts";

export type ThreadRequest = { id: number; texts: string[]; kind: "query" | "document" } | { id: number; close: true };
export type ThreadResponse = { id: number; vectors?: Float32Array[]; error?: { name: string; message: string } };

const { modelDir, options } = workerData as { modelDir: string; options: OnnxEmbedderOptions };
const port = parentPort!;

try {
  const embedder = await OnnxEmbedder.load(modelDir, options);
  port.postMessage({ ready: embedder.info() });
  port.on("message", async (request: ThreadRequest) => {
    if ("close" in request) {
      await embedder.close();
      port.postMessage({ id: request.id } satisfies ThreadResponse);
      return;
    }
    try {
      const vectors = await embedder.embed(request.texts, request.kind);
      port.postMessage({ id: request.id, vectors } satisfies ThreadResponse, vectors.map((v) => v.buffer as ArrayBuffer));
    } catch (error) {
      const e = error as Error;
      port.postMessage({ id: request.id, error: { name: e.name, message: e.message } } satisfies ThreadResponse);
    }
  });
} catch (error) {
  const e = error as Error;
  port.postMessage({ failed: { name: e.name, message: e.message } });
}
