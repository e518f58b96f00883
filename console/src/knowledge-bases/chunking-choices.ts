// The two-level chunking and document-vector choices a base is created with, as the console names
// them; UNSPECIFIED leaves the choice to Quarry (no parents; document vectors auto).
import { DocumentVectorMode, ParentMode } from "../../../gen/quarry/common/v1/common_pb.ts";

export const PARENT_MODES = [
  { value: ParentMode.UNSPECIFIED, label: "none (default)" },
  { value: ParentMode.SECTION, label: "section" },
  { value: ParentMode.DOCUMENT, label: "whole document (when it fits)" },
];

export const DOCUMENT_VECTOR_MODES = [
  { value: DocumentVectorMode.UNSPECIFIED, label: "auto (default)" },
  { value: DocumentVectorMode.OFF, label: "off: chunk vectors only" },
];

/** The card's one-line summary of a base's parents and document vectors. */
export function levelsSummary(parent: ParentMode | undefined, documentVector: DocumentVectorMode | undefined): string {
  const parents = parent === ParentMode.SECTION ? "parents: sections" : parent === ParentMode.DOCUMENT ? "parents: documents" : "no parents";
  const vectors = documentVector === DocumentVectorMode.AUTO ? "document vectors" : "chunk vectors only";
  return `${parents} · ${vectors}`;
}
