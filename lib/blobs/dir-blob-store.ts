// The blob store as a folder (QUARRY_BLOB_DIR): the embedded mode's, and a distributed deployment's
// whose gateways and parsers share a volume. A blob is written under a temporary dot-name and
// renamed, so a reader (and a backup, which skips dot-names) never sees half of one.
import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createWriteStream } from "node:fs";
import { BlobNotFoundError, checkKey, checkPrefix, isKey, RefusedReferenceError, type BlobBody, type BlobStore } from "./blob-store.ts";

export class DirBlobStore implements BlobStore {
  private readonly dir: string;
  readonly root: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
    this.root = pathToFileURL(this.dir + sep).href;
  }

  private path(key: string): string {
    return join(this.dir, ...checkKey(key).split("/"));
  }

  async put(key: string, body: BlobBody): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = join(dirname(path), `.${key.split("/").pop()}.${randomUUID()}`);
    try {
      if (body instanceof Uint8Array) await writeFile(temporary, body);
      else await pipeline(Readable.from(body), createWriteStream(temporary));
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async read(key: string): Promise<Uint8Array> {
    try {
      return await readFile(this.path(key));
    } catch (error) {
      throw missingOr(error, key);
    }
  }

  async open(key: string): Promise<AsyncIterable<Uint8Array>> {
    // Opened here so a missing blob is an error now; the stream then reads from that handle.
    const handle = await open(this.path(key), "r").catch((error: unknown) => {
      throw missingOr(error, key);
    });
    // The stream owns the handle: it closes it at the end, or when the reader destroys it.
    return handle.createReadStream();
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async list(prefix: string): Promise<string[]> {
    const folder = join(this.dir, ...checkPrefix(prefix).split("/").filter(Boolean));
    const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    });
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) => relative(this.dir, join(entry.parentPath, entry.name)).split(sep).join("/"))
      .filter(isKey)
      .sort();
  }

  async deletePrefix(prefix: string): Promise<void> {
    if (checkPrefix(prefix) === "") throw new Error("refusing to delete every blob: name a folder prefix");
    await rm(join(this.dir, ...prefix.split("/").filter(Boolean)), { recursive: true, force: true });
  }

  reference(key: string): string {
    return pathToFileURL(this.path(key)).href;
  }

  /** Judged on the path as written; the parser reads file references through content-reference.ts, which also resolves symlinks. */
  keyOf(reference: string): string {
    let path: string;
    try {
      path = fileURLToPath(reference);
    } catch {
      throw new RefusedReferenceError(`not a reference under ${this.root}: ${JSON.stringify(reference.slice(0, 200))}`);
    }
    const rel = relative(this.dir, resolve(path));
    const key = rel.split(sep).join("/");
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel) || !isKey(key)) {
      throw new RefusedReferenceError(`reference refused: ${path} is outside the blob folder ${this.dir}`);
    }
    return key;
  }
}

function missingOr(error: unknown, key: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "EISDIR" ? new BlobNotFoundError(`no blob ${key}`) : error;
}
