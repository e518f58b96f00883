// The API's query-expansion enums and retrieval's modes, translated in this one place. The API has
// two enums for the one choice: QueryRewriteMode (quarry.common.v1) is canonical — an assistant's
// default and a request's RetrievalSettings.query_rewrite; QueryExpansion
// (RetrievalSettings.query_expansion) is deprecated but still read, from requests and from turns
// stored before it was replaced, and its numbers differ (its REWRITE is 1, QueryRewriteMode's NONE).
import { QueryExpansion, type RetrievalSettings } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import { QueryRewriteMode } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import type { QueryExpansionChoice } from "./query-expansion.ts";

const FROM_DEPRECATED: Record<QueryExpansion, QueryRewriteMode> = {
  [QueryExpansion.UNSPECIFIED]: QueryRewriteMode.UNSPECIFIED,
  [QueryExpansion.REWRITE]: QueryRewriteMode.REWRITE,
  [QueryExpansion.HYDE]: QueryRewriteMode.HYDE,
  [QueryExpansion.MULTI_QUERY]: QueryRewriteMode.MULTI_QUERY,
};

const CHOICE: Record<QueryRewriteMode, QueryExpansionChoice | undefined> = {
  [QueryRewriteMode.UNSPECIFIED]: undefined,
  [QueryRewriteMode.NONE]: "none",
  [QueryRewriteMode.REWRITE]: "rewrite",
  [QueryRewriteMode.HYDE]: "hyde",
  [QueryRewriteMode.MULTI_QUERY]: "multi_query",
};

const MODE: Record<QueryExpansionChoice, QueryRewriteMode> = {
  none: QueryRewriteMode.NONE,
  rewrite: QueryRewriteMode.REWRITE,
  hyde: QueryRewriteMode.HYDE,
  multi_query: QueryRewriteMode.MULTI_QUERY,
};

const nameOf = (mode: QueryRewriteMode) => QueryRewriteMode[mode].toLowerCase().replace(/_/g, "-");

/**
 * The query rewrite mode settings ask for: `query_rewrite`, or the deprecated `query_expansion` in
 * its terms. Both set to different modes is a contradiction the caller must settle, not one to guess.
 */
export function queryRewriteOf(settings: Pick<RetrievalSettings, "queryRewrite" | "queryExpansion"> | undefined): QueryRewriteMode {
  const mode = settings?.queryRewrite ?? QueryRewriteMode.UNSPECIFIED;
  if (!(mode in CHOICE)) throw new InvalidInputError(`settings.query_rewrite ${mode} is not a query rewrite mode: use 0 (unspecified) to 4 (multi-query)`);
  const legacy = settings?.queryExpansion ?? QueryExpansion.UNSPECIFIED;
  const fromLegacy = FROM_DEPRECATED[legacy];
  if (fromLegacy === undefined) throw new InvalidInputError(`settings.query_expansion ${legacy} is not a query expansion mode (the field is deprecated: use settings.query_rewrite)`);
  if (mode !== QueryRewriteMode.UNSPECIFIED && fromLegacy !== QueryRewriteMode.UNSPECIFIED && mode !== fromLegacy) {
    throw new InvalidInputError(
      `settings.query_rewrite asks for ${nameOf(mode)} but the deprecated settings.query_expansion asks for ${nameOf(fromLegacy)}: set query_rewrite alone`,
    );
  }
  return mode || fromLegacy;
}

/** What retrieval runs for a mode; undefined when unspecified (an assistant's default applies). */
export function expansionOf(mode: QueryRewriteMode | undefined): QueryExpansionChoice | undefined {
  return CHOICE[mode ?? QueryRewriteMode.UNSPECIFIED];
}

/** The mode a turn or a debug report records for what retrieval ran. */
export function rewriteModeOf(choice: QueryExpansionChoice | undefined): QueryRewriteMode {
  return choice ? MODE[choice] : QueryRewriteMode.UNSPECIFIED;
}
