// The hand-run studies read their benchmark set from the shared material (../shared/eval/…), which a
// fresh clone does not have: without it a study says so in one loud line and stops, rather than
// dying in a stack trace; where the material is required (QUARRY_REQUIRE_SHARED=1) that is a failure.
import { existsSync } from "node:fs";
import { loadBeirDataset, type BeirDataset } from "./beir-dataset.ts";

type LoadOptions = Parameters<typeof loadBeirDataset>[1];

export async function loadStudyDataset(study: string, dir: string | undefined, options?: LoadOptions): Promise<BeirDataset> {
  if (!dir) throw new Error(`${study}: --dataset DIR is required`);
  if (!existsSync(dir)) {
    process.stderr.write(`*** SKIPPED: ${study} did not run: ${dir} is not there (the shared material beside the clone, ../shared; pass --dataset DIR) ***\n`);
    process.exit(process.env.QUARRY_REQUIRE_SHARED === "1" ? 1 : 0);
  }
  return loadBeirDataset(dir, options);
}
