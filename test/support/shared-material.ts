// The shared material beside a clone (../shared: a real-world document corpus and the public
// evaluation sets), found from the repository root rather than the working directory. The suites
// own their fixtures (test/fixtures); only the suites about that real material use it, run when it
// is there, and are skipped with one loud line when it is not, or fail with QUARRY_REQUIRE_SHARED=1.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describeWith, type Requirement } from "./engines.ts";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The folder ../shared/<part> beside the repository, e.g. "corpus/docs" or "eval". */
export function sharedPath(part: string): string {
  return resolve(REPO_ROOT, "..", "shared", part);
}

function shared(part: string): Requirement {
  const dir = sharedPath(part);
  return {
    value: existsSync(dir) ? dir : undefined,
    requiredBy: "QUARRY_REQUIRE_SHARED",
    missing: `${dir} is not there`,
    hint: "It is the shared material beside the clone (../shared), which CI provides",
  };
}

/** describe() over the real material in ../shared/<part>; the body gets the folder's path. */
export function describeWithShared(part: string, name: string, body: (dir: string) => void): void {
  describeWith(shared(part), name, body);
}

/** The path of one file of the real corpus (../shared/corpus/docs), for suites inside describeWithShared. */
export function sharedCorpusFile(name: string): string {
  return join(sharedPath("corpus/docs"), name);
}
