// A model folder appears whole or not at all. Its files are written into a staging folder inside a
// scratch folder beside the models, checked by the caller, and renamed into place (atomic on one
// filesystem), so a crash or a failed checksum mid-install never leaves a folder that looks installed.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface StagedInstall {
  modelsDir: string;
  /** The model's folder once installed. */
  target: string;
  name: string;
  /** File name the manifest is written to inside the folder, after `fill` succeeded. */
  manifestFile: string;
  manifest: unknown;
  log: (line: string) => void;
}

/**
 * Runs `fill(work, staging)` — it downloads into `work` and leaves the model's files, checked, in
 * `staging` — then writes the manifest and swaps the folder in. The scratch folder is removed
 * whatever happens.
 */
export async function installStaged(
  install: StagedInstall,
  fill: (work: string, staging: string) => void | Promise<void>,
): Promise<"installed"> {
  mkdirSync(install.modelsDir, { recursive: true });
  const work = mkdtempSync(join(install.modelsDir, `.install-${install.name}-`));
  try {
    const staging = join(work, "model");
    mkdirSync(staging);
    await fill(work, staging);
    writeFileSync(join(staging, install.manifestFile), JSON.stringify(install.manifest, null, 2));
    rmSync(install.target, { recursive: true, force: true });
    renameSync(staging, install.target);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  install.log(`${install.name} ready at ${install.target}`);
  return "installed";
}
