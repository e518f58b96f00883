// One sync of a source: list it, compare each item with the cursor (item id → change token,
// content hash, document), and submit only what is new or changed, through the normal upload path
// (so progress, failures and versions work as for any upload). A removed item deletes its document;
// a new item whose bytes equal a removed one's is a move: its document is re-pointed (metadata), not
// embedded again. The cursor is written per item only after its submission is durable, so a sync
// killed mid-way resumes: an item submitted but not recorded is submitted again with the same bytes
// under the same name, which the catalog reports unchanged (or supersedes while still in flight).
import { createHash } from "node:crypto";
import { documentIdFor } from "../../lib/catalog-ids.ts";
import type { ListedItem, SourceLister } from "./lister.ts";

export interface CursorItem {
  itemId: string;
  changeToken: string;
  contentHash: string;
  documentId: string;
  fileName: string;
}

export interface SyncTarget {
  sourceId: string;
  knowledgeBaseId: string;
  tags: Record<string, string>;
}

/** What a sync needs from the rest of Quarry (the index's cursor, the upload path). */
export interface SyncPorts {
  cursor(): Promise<CursorItem[]>;
  record(item: CursorItem): Promise<void>;
  forget(itemId: string): Promise<void>;
  submit(input: { fileName: string; mimeType: string; metadata: Record<string, string>; content: Uint8Array }): Promise<{ documentId: string; unchanged: boolean }>;
  /** A document that is gone already counts as deleted. */
  deleteDocument(documentId: string): Promise<void>;
  setMetadata(documentId: string, metadata: Record<string, string>): Promise<void>;
}

export interface SyncCounts {
  /** Items the listing found (so far, while it runs). */
  listed: number;
  /** Items sent through the upload path (so far). */
  submitted: number;
  added: number;
  changed: number;
  removed: number;
  moved: number;
  unchanged: number;
  failed: number;
  errors: { item: string; reason: string }[];
}

const MAX_ERRORS = 50;

/** The metadata each document of a source carries; the source's own keys win over a tag of the same name. */
export function sourceMetadata(target: SyncTarget, item: ListedItem): Record<string, string> {
  return {
    ...target.tags,
    source_id: target.sourceId,
    source_path: item.id,
    ...(item.modifiedAt ? { source_modified: item.modifiedAt.toISOString() } : {}),
  };
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** `progress` is told the counts each time they change (a copy it may keep). */
export async function syncSource(target: SyncTarget, lister: SourceLister, ports: SyncPorts, progress: (counts: SyncCounts) => void = () => {}): Promise<SyncCounts> {
  const counts: SyncCounts = { listed: 0, submitted: 0, added: 0, changed: 0, removed: 0, moved: 0, unchanged: 0, failed: 0, errors: [] };
  const report = () => progress({ ...counts, errors: counts.errors.slice() });
  const fail = (item: string, reason: string) => {
    counts.failed++;
    if (counts.errors.length < MAX_ERRORS) counts.errors.push({ item, reason });
  };
  const cursor = new Map((await ports.cursor()).map((item) => [item.itemId, item]));
  const seen = new Set<string>();
  const pending: ListedItem[] = [];
  // The whole listing first: a move is only known once every removed item is.
  for await (const listing of lister.list()) {
    if ("unreadable" in listing) {
      seen.add(listing.unreadable.id);
      counts.listed++;
      fail(listing.unreadable.id, listing.unreadable.reason);
      report();
      continue;
    }
    const { item } = listing;
    if (seen.has(item.id)) continue;
    seen.add(item.id);
    counts.listed++;
    if (cursor.get(item.id)?.changeToken === item.changeToken) counts.unchanged++;
    else pending.push(item);
    report();
  }
  const removed = new Map([...cursor].filter(([id]) => !seen.has(id)));
  const removedByHash = new Map<string, CursorItem[]>();
  for (const item of removed.values()) removedByHash.set(item.contentHash, [...(removedByHash.get(item.contentHash) ?? []), item]);
  // Names a moved document keeps: a new item may not take one (its id derives from the name).
  const documentsInUse = new Set([...cursor.values()].map((item) => item.documentId));

  for (const item of pending) {
    try {
      const previous = cursor.get(item.id);
      const content = await item.read();
      const contentHash = sha256(content);
      if (previous && previous.contentHash === contentHash) {
        await ports.record({ ...previous, changeToken: item.changeToken });
        counts.unchanged++;
        continue;
      }
      const mover = previous ? undefined : removedByHash.get(contentHash)?.find((candidate) => removed.has(candidate.itemId));
      if (mover) {
        await ports.setMetadata(mover.documentId, sourceMetadata(target, item));
        await ports.record({ itemId: item.id, changeToken: item.changeToken, contentHash, documentId: mover.documentId, fileName: mover.fileName });
        await ports.forget(mover.itemId);
        removed.delete(mover.itemId);
        counts.moved++;
        continue;
      }
      const fileName = previous?.fileName ?? freeName(target.knowledgeBaseId, item.name, documentsInUse);
      const result = await ports.submit({ fileName, mimeType: item.mimeType, metadata: sourceMetadata(target, item), content });
      counts.submitted++;
      documentsInUse.add(result.documentId);
      await ports.record({ itemId: item.id, changeToken: item.changeToken, contentHash, documentId: result.documentId, fileName });
      if (result.unchanged) counts.unchanged++;
      else if (previous) counts.changed++;
      else counts.added++;
    } catch (error) {
      fail(item.id, (error as Error).message);
    } finally {
      report();
    }
  }

  const kept = new Set<string>();
  for (const [id, item] of cursor) if (!removed.has(id)) kept.add(item.documentId);
  for (const item of removed.values()) {
    try {
      // A document another item still names (a move recorded before a crash forgot the old item) stays.
      if (!kept.has(item.documentId)) {
        await ports.deleteDocument(item.documentId);
      }
      await ports.forget(item.itemId);
      counts.removed++;
    } catch (error) {
      fail(item.itemId, `could not delete its document: ${(error as Error).message}`);
    }
    report();
  }
  return counts;
}

/**
 * The item's name, or — when a document that moved still holds that name's id — the name with a
 * number: a document keeps its id (and name) when its item moves, so a new item at the old path must
 * not write over it.
 */
function freeName(knowledgeBaseId: string, name: string, documentIdsInUse: ReadonlySet<string>): string {
  if (!documentIdsInUse.has(documentIdFor(knowledgeBaseId, name))) return name;
  const dot = name.lastIndexOf(".");
  const [stem, extension] = dot > name.lastIndexOf("/") ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  for (let n = 2; ; n++) {
    const candidate = `${stem} (${n})${extension}`;
    if (!documentIdsInUse.has(documentIdFor(knowledgeBaseId, candidate))) return candidate;
  }
}
