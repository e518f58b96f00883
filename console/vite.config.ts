// Builds the console into console/dist, which the gateway serves at / (gateway/http/console-assets.ts).
// The model catalog is read here, at build time, from the same module the embedder installs from,
// so the create form offers exactly the models Quarry knows (the API has no call that lists them).
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";
import { MODEL_CATALOG, DEFAULT_MODEL } from "../lib/models/model-catalog.ts";

const catalog = MODEL_CATALOG.map(({ name, description, dimension, maxTokens }) => ({ name, description, dimension, maxTokens }));

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  define: {
    __MODEL_CATALOG__: JSON.stringify(catalog),
    __DEFAULT_MODEL__: JSON.stringify(DEFAULT_MODEL),
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Source maps would double the build's size and time for a console served from the same repo.
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
  },
  logLevel: "warn",
});
