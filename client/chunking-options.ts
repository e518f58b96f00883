import { create } from "@bufbuild/protobuf";
import { ChunkingSettingsSchema, DocumentVectorMode, ParentMode, type ChunkingSettings } from "../gen/quarry/common/v1/common_pb.ts";

export const PARENT_CHOICES = ["none", "section", "document"] as const;

const PARENT_MODE: Record<(typeof PARENT_CHOICES)[number], ParentMode> = {
  none: ParentMode.NONE,
  section: ParentMode.SECTION,
  document: ParentMode.DOCUMENT,
};

export const DOCUMENT_VECTOR_CHOICES = ["auto", "off"] as const;

const DOCUMENT_VECTOR_MODE: Record<(typeof DOCUMENT_VECTOR_CHOICES)[number], DocumentVectorMode> = {
  auto: DocumentVectorMode.AUTO,
  off: DocumentVectorMode.OFF,
};

export interface ChunkingFlags {
  chunkSize?: number;
  chunkOverlap?: number;
  parent?: (typeof PARENT_CHOICES)[number];
  parentSize?: number;
  documentVector?: (typeof DOCUMENT_VECTOR_CHOICES)[number];
}

/** The chunking settings `kb create` sends; undefined when no flag was given, so the server's defaults apply. */
export function chunkingFromFlags(o: ChunkingFlags): ChunkingSettings | undefined {
  if (o.chunkSize === undefined && o.chunkOverlap === undefined && o.parent === undefined && o.parentSize === undefined && o.documentVector === undefined) return undefined;
  return create(ChunkingSettingsSchema, {
    chunkSize: o.chunkSize ?? 0,
    chunkOverlap: o.chunkOverlap ?? 0,
    parent: o.parent ? PARENT_MODE[o.parent] : ParentMode.UNSPECIFIED,
    parentMaxTokens: o.parentSize ?? 0,
    documentVector: o.documentVector ? DOCUMENT_VECTOR_MODE[o.documentVector] : DocumentVectorMode.UNSPECIFIED,
  });
}

/** How `kb create` describes a base's chunking. */
export function describeChunking(c: ChunkingSettings | undefined): string {
  const chunks = `chunks of ${c?.chunkSize} tokens with ${c?.chunkOverlap} overlap`;
  const parent = PARENT_CHOICES.find((name) => PARENT_MODE[name] === c?.parent);
  const withParents = parent && parent !== "none" ? `${chunks}, each read with its ${parent} (parents up to ${c?.parentMaxTokens} tokens)` : chunks;
  return c?.documentVector === DocumentVectorMode.AUTO ? `${withParents}; documents the model reads at least half of also embedded whole` : withParents;
}

/**
 * The settings `kb update` sends: the base's current ones with the flags given laid over them
 * (UpdateKnowledgeBase replaces the settings whole); undefined when no chunking flag was given.
 */
export function mergeChunkingFlags(current: ChunkingSettings | undefined, o: ChunkingFlags): ChunkingSettings | undefined {
  if (o.chunkSize === undefined && o.chunkOverlap === undefined && o.parent === undefined && o.parentSize === undefined) return undefined;
  const parent = o.parent ? PARENT_MODE[o.parent] : (current?.parent ?? ParentMode.UNSPECIFIED);
  return create(ChunkingSettingsSchema, {
    chunkSize: o.chunkSize ?? current?.chunkSize ?? 0,
    chunkOverlap: o.chunkOverlap ?? current?.chunkOverlap ?? 0,
    separators: current?.separators ?? [],
    parent,
    // Another parent mode without a size takes that mode's default rather than the old mode's size.
    parentMaxTokens: o.parentSize ?? (parent === current?.parent ? current.parentMaxTokens : 0),
    // Kept as it is: unset, it would take the default (auto) and re-embed an `off` base's documents whole.
    documentVector: current?.documentVector ?? DocumentVectorMode.UNSPECIFIED,
  });
}
