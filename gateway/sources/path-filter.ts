// Include/exclude globs over an item's relative path (picomatch), as folder and S3 sources take them:
// an empty include takes every path; dot files only when an include glob names them, while an
// exclude glob matches them too (excluding `**/*.log` must also leave out `.cache/x.log`).
import picomatch from "picomatch";

export interface PathFilter {
  /** Whether the path is taken. */
  takes(path: string): boolean;
  /** Whether the path (a folder's, with or without its trailing slash) is excluded. */
  excludes(path: string): boolean;
}

export function pathFilter(include: readonly string[], exclude: readonly string[]): PathFilter {
  const included = include.length > 0 ? picomatch([...include]) : () => true;
  const excluded = exclude.length > 0 ? picomatch([...exclude], { dot: true }) : () => false;
  return { takes: (path) => included(path) && !excluded(path), excludes: excluded };
}
