import { RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { QueryRewriteMode } from "../../gen/quarry/common/v1/assistant_pb.ts";

/** The retrieval modes a person chooses between, in the words the CLI uses. */
export const MODES = [
  { value: RetrievalMode.HYBRID, label: "hybrid" },
  { value: RetrievalMode.BM25, label: "bm25" },
  { value: RetrievalMode.VECTOR, label: "vector" },
];

export const REWRITE_MODES = [
  { value: QueryRewriteMode.UNSPECIFIED, label: "default (as asked)" },
  { value: QueryRewriteMode.NONE, label: "none" },
  { value: QueryRewriteMode.REWRITE, label: "rewrite" },
  { value: QueryRewriteMode.HYDE, label: "HyDE" },
  { value: QueryRewriteMode.MULTI_QUERY, label: "multi-query" },
];

export function modeLabel(mode: RetrievalMode): string {
  return MODES.find((m) => m.value === mode)?.label ?? "hybrid";
}
