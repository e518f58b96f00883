// The chunker's public face: what app/, cli/, bench/, eval/ and test/ may use (the import rules in
// .dependency-cruiser.cjs allow nothing else of this folder outside it).
export { assembleChunker } from "./main.ts";
export { chunkDocument, defaultChunkingSettings, validateChunkingSettings } from "./chunk-document.ts";
export { previewParents } from "./preview-parents.ts";
