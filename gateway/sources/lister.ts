// One interface for every kind of source: a lister walks the place and yields each item with a
// stable id, a change token and a way to read its bytes. The sync (source-sync.ts) compares ids and
// tokens with the cursor and reads only what is new or changed. A kind is one module behind this
// (folder-lister.ts, website-lister.ts; an S3 bucket is meant to be the next).

export interface ListedItem {
  /** Stable within the source: a relative path, a URL. */
  id: string;
  /** The document name a new item gets (its path; for a page, host and path with an extension). */
  name: string;
  /** Changes when the item does: mtime+size, an ETag, a content hash. */
  changeToken: string;
  /** Empty: the parser decides from the name and the bytes. */
  mimeType: string;
  modifiedAt?: Date;
  read(): Promise<Uint8Array>;
}

/** An item the lister saw but could not read now (a page answering 500): kept, not deleted. */
export interface UnreadableItem {
  id: string;
  reason: string;
}

export type Listing = { item: ListedItem } | { unreadable: UnreadableItem };

export interface SourceLister {
  /** Throws when the source as a whole cannot be listed (nothing is then changed). */
  list(): AsyncIterable<Listing>;
}
