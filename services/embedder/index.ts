// The embedder's public face: what app/, cli/, bench/, eval/ and test/ may use (the import rules in
// .dependency-cruiser.cjs allow nothing else of this folder outside it). The ONNX embedder itself is
// public on purpose: bench/ and eval/ measure the raw model beside the pipeline.
export { assembleEmbedder } from "./main.ts";
export { embedderRoutes } from "./routes.ts";
export { SingleModelPool } from "./embedder-pool.ts";
export type { Embedder, EmbeddingKind } from "./embedder.ts";
export { defaultModelDir, OnnxEmbedder, WHOLE_BY_DEFAULT } from "./onnx-embedder.ts";
export { KnownTokenShare } from "./known-token-share.ts";
export { installModels } from "./model-install.ts";
