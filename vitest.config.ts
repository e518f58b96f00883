import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["lib/**/*.test.ts", "services/**/*.test.ts", "gateway/**/*.test.ts", "cli/**/*.test.ts", "app/**/*.test.ts", "client/**/*.test.ts", "test/**/*.test.ts", "bench/**/*.test.ts", "eval/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: "forks",
    // Two cores: more workers only fight over the CPU the embedding model needs.
    maxWorkers: 2,
  },
});
