// Which files `quarry ingest` uploads. A folder is walked for the formats Quarry parses (the parser
// service's own list, services/parser), and every file left out is named with the reason, so an
// SVG in a docs folder is not indexed as markup nor silently dropped.
import { readdir, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { describeFormat, formatOfFileName, type DocumentFormat } from "../services/parser/format-detection.ts";
import { parsesFormat } from "../services/parser/builtin-formats.ts";
import { UsageError } from "./error-report.ts";

export interface IngestFile {
  path: string;
  mimeType: string;
}

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface FileSelection {
  files: IngestFile[];
  skipped: SkippedFile[];
}

/**
 * Files named on the command line are taken as they are (the parser then detects what they are);
 * files found in a folder only when their extension is a format Quarry parses. Hidden files and
 * folders are passed over without a mention, as the shell's own globbing does.
 */
export async function selectFiles(paths: string[], options: { tikaConfigured: boolean }): Promise<FileSelection> {
  const selection: FileSelection = { files: [], skipped: [] };
  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") throw new UsageError(`${path}: no such file or folder`);
      if (code === "EACCES") throw new UsageError(`${path}: permission denied`);
      throw error;
    }
    if (info.isDirectory()) await walk(path, selection, options.tikaConfigured);
    else selection.files.push({ path, mimeType: mimeTypeOf(path) });
  }
  selection.files.sort((a, b) => a.path.localeCompare(b.path));
  return selection;
}

async function walk(folder: string, selection: FileSelection, tikaConfigured: boolean): Promise<void> {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      await walk(path, selection, tikaConfigured);
      continue;
    }
    if (!entry.isFile()) continue;
    const format = formatOfFileName(entry.name);
    const reason = skipReason(entry.name, format, tikaConfigured);
    if (reason) selection.skipped.push({ path, reason });
    else selection.files.push({ path, mimeType: describeFormat(format!).mimeType });
  }
}

function skipReason(name: string, format: DocumentFormat | undefined, tikaConfigured: boolean): string | undefined {
  if (!format) {
    const extension = extname(name);
    return extension ? `Quarry does not parse ${extension} files` : "no file extension to tell its format by";
  }
  if (!parsesFormat(format, tikaConfigured)) return `${describeFormat(format).name}: needs Apache Tika (set TIKA_URL)`;
  return undefined;
}

function mimeTypeOf(path: string): string {
  const format = formatOfFileName(path);
  return format ? describeFormat(format).mimeType : "";
}
