// Where Quarry keeps bytes too large or too lasting for an event: every upload's original (kept for
// re-ingest and download) and an upload too large to travel inline. Two implementations: a folder
// (dir-blob-store.ts, the embedded default, shared by gateways and parsers on one host) and S3
// (s3-blob-store.ts: any S3-compatible store, so gateways and parsers share nothing but a bucket).
// Both run the same contract suite (testing/blob-store.contract.ts). Events carry a blob's
// reference (file:// or s3://); a reader accepts only references under its own root, since anyone
// who can produce to the bus picks the reference.
import { InvalidInputError, NotFoundError } from "../errors.ts";

/** A blob's bytes as given: whole, or a stream (a Node Readable is one) written without buffering it all. */
export type BlobBody = Uint8Array | AsyncIterable<Uint8Array>;

export interface BlobStore {
  /** The root every reference of this store lies under (file:///…/blobs/ or s3://bucket/prefix/), for messages. */
  readonly root: string;
  /** Writes the blob whole: a reader sees the old bytes or the new ones, never a part. */
  put(key: string, body: BlobBody): Promise<void>;
  /** The whole blob; BlobNotFoundError when there is none. */
  read(key: string): Promise<Uint8Array>;
  /** The blob as a stream, opened (so a missing one is BlobNotFoundError here, not mid-stream). */
  open(key: string): Promise<AsyncIterable<Uint8Array>>;
  /** Removes the blob; one that is not there is no error. */
  delete(key: string): Promise<void>;
  /** The keys under a folder prefix ("originals/kb_1/"; "" for all), sorted. */
  list(prefix: string): Promise<string[]>;
  /** Removes every blob under a folder prefix ("originals/kb_1/"). */
  deletePrefix(prefix: string): Promise<void>;
  /** The reference an event carries for the key. */
  reference(key: string): string;
  /** The key a reference names; RefusedReferenceError when it is not under this store's root. */
  keyOf(reference: string): string;
}

/** No blob under that key. */
export class BlobNotFoundError extends NotFoundError {}

/** A reference outside the store's root (or of another kind): never followed. */
export class RefusedReferenceError extends InvalidInputError {}

// Keys are Quarry's own ("originals/kb_…/doc_…"): plain segments, none empty, none starting with a
// dot (the folder store's temporary names do), so no key can climb out of the root in either store.
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

export function checkKey(key: string): string {
  if (!isKey(key)) throw new InvalidInputError(`not a blob key Quarry makes: ${JSON.stringify(key.slice(0, 200))}`);
  return key;
}

/** A folder prefix: "" (everything) or keys' leading segments ending in "/". */
export function checkPrefix(prefix: string): string {
  if (prefix !== "" && (!prefix.endsWith("/") || !isKey(prefix.slice(0, -1)))) {
    throw new InvalidInputError(`not a blob folder prefix: ${JSON.stringify(prefix.slice(0, 200))} (segments ending in "/")`);
  }
  return prefix;
}

export function isKey(key: string): boolean {
  return key.split("/").every((segment) => SEGMENT.test(segment));
}
