// Reading a document that documents.submitted points at (content_uri) instead of carrying it.
// Anyone who can produce to the topic picks the path, so the parser reads only regular files under
// the folders it was told to trust (Quarry's own blob folder, and QUARRY_FILE_REF_ROOT when set),
// judged on the path with every symlink and `..` resolved — and once more on the file actually
// opened, so a symlink swapped in between the check and the open cannot lead elsewhere.
import { constants } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RefusedReferenceError, type BlobStore } from "../../lib/blobs/blob-store.ts";
import { InvalidInputError, NotFoundError } from "../../lib/errors.ts";

/** A reference the parser will not follow; the event is dead-lettered with this reason. */
export { RefusedReferenceError };

/**
 * The bytes a content_uri names: a file:// reference under the allowed folders (below), or a
 * reference into the blob store (s3://bucket/prefix/…), which the store accepts only under its root.
 */
export async function readReferencedContent(uri: string, allowedRoots: readonly string[], blobs: BlobStore | undefined): Promise<Uint8Array> {
  if (uri.startsWith("file:") || !blobs) return readContentReference(uri, allowedRoots);
  const key = blobs.keyOf(uri);
  try {
    return await blobs.read(key);
  } catch (error) {
    // A missing blob is the event's fault (it names nothing): the document fails with the reason.
    if (error instanceof NotFoundError) throw new InvalidInputError(`cannot read ${uri}: no such object`, { cause: error });
    throw error;
  }
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" ? false : !rel.startsWith("..") && !isAbsolute(rel);
}

async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const root of roots) {
    // A root that does not exist (yet) holds nothing to read.
    const real = await realpath(resolve(root)).catch(() => undefined);
    if (real) out.push(real);
  }
  return out;
}

export async function readContentReference(uri: string, allowedRoots: readonly string[]): Promise<Uint8Array> {
  let path: string;
  try {
    if (!uri.startsWith("file:")) throw new Error("not a file: URI");
    path = fileURLToPath(uri);
  } catch {
    throw new RefusedReferenceError(`content_uri must be a local file:// URI, not ${JSON.stringify(uri.slice(0, 200))}`);
  }
  const roots = await realRoots(allowedRoots);
  if (roots.length === 0) {
    throw new RefusedReferenceError(`file references are refused: ${path} is outside every allowed folder (set QUARRY_FILE_REF_ROOT to allow one)`);
  }
  const outside = () => new RefusedReferenceError(`file reference refused: ${path} is outside the allowed folders (QUARRY_FILE_REF_ROOT)`);
  const inside = (p: string) => roots.some((root) => within(root, p));
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    // Judged on the path as written, so a reference outside gets the same answer whether or not the file exists.
    if (!inside(resolve(path))) throw outside();
    throw new InvalidInputError(`cannot read ${uri}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!inside(real)) throw outside();
  let handle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw new InvalidInputError(`cannot read ${uri}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const opened = await realpath(`/proc/self/fd/${handle.fd}`).catch(() => real);
    if (!inside(opened)) throw outside();
    // A FIFO or a device (/dev/zero) would block or never end.
    if (!(await handle.stat()).isFile()) throw new RefusedReferenceError(`file reference refused: ${path} is not a regular file`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
