// Builds the console into console/dist, which the gateway serves at / (gateway/http/console-assets.ts).
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Source maps would double the build's size and time for a console served from the same repo.
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
  },
  logLevel: "warn",
});
