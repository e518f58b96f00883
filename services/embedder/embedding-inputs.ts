// What the vectorizing stage sends to the model for one chunks.created event, and the
// chunks.embedded event it makes of the vectors. Pure functions of the event, shared by the main
// thread (small events) and the payload threads (large ones, see payload-threads.ts).
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ChunksEmbeddedSchema, type ChunksCreated, type ChunksEmbedded } from "../../gen/quarry/events/v1/events_pb.ts";
import { withHeadingPath } from "../../lib/chunk-context.ts";

export interface EmbeddingInputs {
  /** One input per chunk, in order, then the document's own input when it shares none. */
  inputs: string[];
  chunkCount: number;
  /** Which input's vector is the document vector; -1 when the document has none. */
  documentInput: number;
}

export function embeddingInputs(event: ChunksCreated): EmbeddingInputs {
  const inputs = event.chunks.map((c) => withHeadingPath(c.text, c.sectionPath));
  // The document's own input is embedded once, with its chunks; one equal to a chunk's input
  // (a one-chunk document without headings) shares that chunk's vector.
  let documentInput = -1;
  if (event.documentText) {
    documentInput = inputs.indexOf(event.documentText);
    if (documentInput < 0) documentInput = inputs.push(event.documentText) - 1;
  }
  return { inputs, chunkCount: event.chunks.length, documentInput };
}

/** `vectorOf(i)` is input i's vector. */
export function embeddedEvent(event: ChunksCreated, model: string, documentInput: number, vectorOf: (i: number) => Float32Array): ChunksEmbedded {
  const init: MessageInitShape<typeof ChunksEmbeddedSchema> = {
    documentId: event.documentId,
    knowledgeBaseId: event.knowledgeBaseId,
    version: event.version,
    fileName: event.fileName,
    embeddingModel: model,
    chunks: event.chunks.map((chunk, i) => ({ chunk, vector: Array.from(vectorOf(i)) })),
    documentVector: documentInput >= 0 ? Array.from(vectorOf(documentInput)) : [],
  };
  return create(ChunksEmbeddedSchema, init);
}
