// Which files `quarry ingest` uploads, and under which names. A folder is walked for the formats the
// server reads — the list its gateway serves (ListReadableFormats), derived from the parsers the
// deployment registers, so the walk, an upload and the console's file picker follow one rule
// (services/parser/reading-rule.ts); every file left out is named with the reason. A file with no
// extension is uploaded and left to the server, which reads it by its content, as any upload.
// A file found in a folder is named by its path inside that folder (intro/README.md), so two files
// of the same name in different subfolders stay two documents; two files that would still get the
// same name are refused, loudly, rather than one replacing the other.
import { readdir, stat } from "node:fs/promises";
import { basename, extname, join, relative, sep } from "node:path";
import type { ReadableFormat } from "../gen/quarry/common/v1/readable_format_pb.ts";
import { describeFormat, formatOfFileName } from "../services/parser/index.ts";
import { UsageError } from "./error-report.ts";

export interface IngestFile {
  path: string;
  /** The document's name: the path inside the folder it was found in, or the file's own name. */
  name: string;
  mimeType: string;
}

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface FileSelection {
  files: IngestFile[];
  skipped: SkippedFile[];
  /** Files not uploaded because another file already has their document name. */
  clashes: SkippedFile[];
}

/**
 * Files named on the command line are taken as they are (the server then detects what they are);
 * files found in a folder when the server reads their extension, or they have none. Hidden files
 * and folders are passed over without a mention, as the shell's own globbing does. `formats` is
 * asked only when there is a folder to walk.
 */
export async function selectFiles(paths: string[], formats: () => Promise<ReadableFormat[]>): Promise<FileSelection> {
  const selection: FileSelection = { files: [], skipped: [], clashes: [] };
  let accepted: Map<string, ReadableFormat> | undefined;
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
    if (info.isDirectory()) {
      accepted ??= new Map((await formats()).flatMap((f) => f.extensions.map((e) => [e.toLowerCase(), f] as const)));
      await walk(path, path, selection, accepted);
    } else {
      selection.files.push({ path, name: basename(path), mimeType: mimeTypeOf(path) });
    }
  }
  selection.files.sort((a, b) => a.path.localeCompare(b.path));
  const byName = new Map<string, IngestFile>();
  selection.files = selection.files.filter((file) => {
    const first = byName.get(file.name);
    if (!first) {
      byName.set(file.name, file);
      return true;
    }
    selection.clashes.push({ path: file.path, reason: `${first.path} is already ingested as "${file.name}" in this run; one document cannot hold both` });
    return false;
  });
  return selection;
}

async function walk(root: string, folder: string, selection: FileSelection, accepted: Map<string, ReadableFormat>): Promise<void> {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      await walk(root, path, selection, accepted);
      continue;
    }
    if (!entry.isFile()) continue;
    const extension = extname(entry.name).slice(1).toLowerCase();
    const format = extension ? accepted.get(extension) : undefined;
    if (extension && !format) selection.skipped.push({ path, reason: skipReason(entry.name, extension) });
    else selection.files.push({ path, name: relative(root, path).split(sep).join("/"), mimeType: format?.mimeType ?? "" });
  }
}

function skipReason(name: string, extension: string): string {
  const known = formatOfFileName(name);
  // A format Quarry knows but this server does not read: only Tika reads it.
  if (known) return `${describeFormat(known).name}: needs Apache Tika (set TIKA_URL on the server)`;
  return `Quarry does not read .${extension} files`;
}

function mimeTypeOf(path: string): string {
  const format = formatOfFileName(path);
  return format ? describeFormat(format).mimeType : "";
}
