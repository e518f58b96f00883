// Python's `openai` package (from PyPI, pinned in python-requirements.txt), in a virtual environment
// this creates once under node_modules/.cache, so a fresh clone and CI get it from `npm test` itself.
// Without python3 (or its venv module) the caller skips loudly; a failed install is a failure.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const REQUIREMENTS = fileURLToPath(new URL("./python-requirements.txt", import.meta.url));
const VENV = fileURLToPath(new URL("../../node_modules/.cache/quarry-python-openai", import.meta.url));

/** The venv's python with `openai` installed, or why it cannot be (no python3, no venv module). */
export async function pythonWithOpenAi(): Promise<{ python: string } | { missing: string }> {
  try {
    await run("python3", ["-c", "import venv, ensurepip"]);
  } catch {
    return { missing: "python3 with its venv and ensurepip modules is not installed" };
  }
  const python = join(VENV, "bin", "python");
  const marker = join(VENV, "installed.txt");
  const wanted = readFileSync(REQUIREMENTS, "utf8");
  if (existsSync(marker) && readFileSync(marker, "utf8") === wanted) return { python };
  await mkdir(VENV, { recursive: true });
  await run("python3", ["-m", "venv", "--clear", VENV], { timeout: 120_000 });
  await run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", REQUIREMENTS], { timeout: 300_000 });
  await writeFile(marker, wanted);
  return { python };
}
