// The line under a synced document's name in the documents table: which source it came from and
// its path (or URL) there.
import type { Document } from "../../../gen/quarry/common/v1/common_pb.ts";

/** The source metadata a sync puts on each document it makes (docs/SOURCES.md). */
export function sourceOf(doc: Pick<Document, "metadata">): { id: string; path: string; modified?: Date } | undefined {
  const id = doc.metadata.source_id;
  if (!id) return undefined;
  const modified = doc.metadata.source_modified ? new Date(doc.metadata.source_modified) : undefined;
  return { id, path: doc.metadata.source_path ?? "", modified: modified && !Number.isNaN(modified.getTime()) ? modified : undefined };
}

export const isUrl = (path: string) => /^https?:\/\//i.test(path);

/** `sourceName`: undefined when the source is not (or no longer) among the base's sources. */
export function SourceMark({ doc, sourceName }: { doc: Document; sourceName?: string }) {
  const from = sourceOf(doc);
  if (!from) return null;
  return (
    <div className="muted small source-mark" data-testid="source-mark" title={`Synced from the source ${sourceName ?? from.id}`}>
      from {sourceName ?? "a removed source"}: {from.path}
    </div>
  );
}
