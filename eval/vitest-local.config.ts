import { defineConfig } from "vitest/config";
export default defineConfig({ root: "/work/main", test: { include: ["eval/**/*.test.ts"], testTimeout: 600_000, hookTimeout: 900_000, pool: "forks", maxWorkers: 1 } });
