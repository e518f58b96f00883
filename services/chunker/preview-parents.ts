import { create } from "@bufbuild/protobuf";
import { PreviewParentSchema, type PreviewParent } from "../../gen/quarry/common/v1/common_pb.ts";
import type { ChunkDraft } from "../../lib/domain.ts";
import { chunkParentToProto } from "../../lib/proto-convert.ts";

/**
 * The parents of the previewed chunks, in text order, each once with its text and its children:
 * what a person checks before choosing two-level chunking (is a parent the unit an answer should
 * read?). Empty when the chunks have no parents.
 */
export function previewParents(text: string, drafts: readonly ChunkDraft[]): PreviewParent[] {
  const byIndex = new Map<number, PreviewParent>();
  for (const draft of drafts) {
    if (!draft.parent) continue;
    let entry = byIndex.get(draft.parent.index);
    if (!entry) {
      entry = create(PreviewParentSchema, { parent: chunkParentToProto(draft.parent), text: text.slice(draft.parent.start, draft.parent.end), chunkIndexes: [] });
      byIndex.set(draft.parent.index, entry);
    }
    entry.chunkIndexes.push(draft.index);
  }
  return [...byIndex.values()];
}
