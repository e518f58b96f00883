// Bytes of every file under a folder: what a store occupies on disk.
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

export async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}
