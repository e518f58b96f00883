// A folder source: every regular file under the folder whose path relative to it matches the
// include globs and none of the exclude globs (picomatch; dot files only when a glob names them).
// The change token is mtime and size, so an unchanged folder is listed with one stat per file and
// nothing is read.
import { lstat, readdir, readFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { InvalidInputError } from "../../lib/errors.ts";
import type { Listing, SourceLister } from "./lister.ts";
import { pathFilter, type PathFilter } from "./path-filter.ts";

export interface FolderSettings {
  path: string;
  include: string[];
  exclude: string[];
}

export function checkFolderSettings(settings: FolderSettings): void {
  if (!settings.path.startsWith("/")) throw new InvalidInputError(`a folder source needs an absolute path, not "${settings.path}"`);
}

export class FolderLister implements SourceLister {
  private readonly filter: PathFilter;

  constructor(private readonly settings: FolderSettings) {
    this.filter = pathFilter(settings.include, settings.exclude);
  }

  async *list(): AsyncIterable<Listing> {
    const root = this.settings.path;
    const stats = await lstat(root).catch((error: NodeJS.ErrnoException) => {
      throw new InvalidInputError(`the folder ${root} cannot be read (${error.code ?? error.message})`);
    });
    if (!stats.isDirectory()) throw new InvalidInputError(`${root} is not a folder`);
    yield* this.walk(root, "");
  }

  private async *walk(absolute: string, relative: string): AsyncIterable<Listing> {
    const entries = await readdir(absolute, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = relative ? posix.join(relative, entry.name) : entry.name;
      const full = join(absolute, entry.name);
      if (entry.isDirectory()) {
        if (!this.filter.excludes(path) && !this.filter.excludes(`${path}/`)) yield* this.walk(full, path);
        continue;
      }
      // Symbolic links are not followed: a link out of the folder would read what the source does not name.
      if (!entry.isFile() || !this.filter.takes(path)) continue;
      try {
        const stat = await lstat(full);
        yield {
          item: {
            id: path,
            name: path,
            changeToken: `${stat.mtimeMs}:${stat.size}`,
            mimeType: "",
            modifiedAt: stat.mtime,
            read: async () => new Uint8Array(await readFile(full)),
          },
        };
      } catch (error) {
        // Deleted between readdir and stat: it is simply not there any more.
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        yield { unreadable: { id: path, reason: (error as Error).message } };
      }
    }
  }
}
