// The worker-thread side of PayloadThreads: decoding a large chunks.created and encoding its
// chunks.embedded, CPU work that grows with the document (16,000 chunks of a 10 MiB text), kept
// off the thread that answers calls. Errors come back by name and message, as the chunker's do.
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { ChunksCreatedSchema, ChunksEmbeddedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { InvalidInputError, QuarryError } from "../../lib/errors.ts";
import { embeddedEvent, embeddingInputs, type EmbeddingInputs } from "./embedding-inputs.ts";

export type PayloadTask =
  /** The inputs of a whole chunks.created event, encoded. */
  | { kind: "inputs"; chunksCreated: Uint8Array }
  /** The encoded chunks.embedded: `vectors` holds input i's vector at i × dimension. */
  | { kind: "embedded"; chunksCreated: Uint8Array; model: string; documentInput: number; vectors: Float32Array; dimension: number };

export type PayloadResult = { inputs: EmbeddingInputs } | { bytes: Uint8Array } | { error: { name: string; message: string } };

function decode(bytes: Uint8Array) {
  try {
    return fromBinary(ChunksCreatedSchema, bytes);
  } catch (error) {
    throw new InvalidInputError(`the stored chunks.created payload does not decode: ${(error as Error).message}`);
  }
}

/** Piscina calls this once per task. */
export default function runPayloadTask(task: PayloadTask): PayloadResult {
  try {
    const event = decode(task.chunksCreated);
    if (task.kind === "inputs") return { inputs: embeddingInputs(event) };
    const { vectors, dimension } = task;
    const message = embeddedEvent(event, task.model, task.documentInput, (i) => vectors.subarray(i * dimension, (i + 1) * dimension));
    return { bytes: toBinary(ChunksEmbeddedSchema, message) };
  } catch (error) {
    const reported = error instanceof QuarryError ? error : new InvalidInputError((error as Error)?.message ?? String(error));
    return { error: { name: reported.name, message: reported.message } };
  }
}
