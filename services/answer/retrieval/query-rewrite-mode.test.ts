import { describe, expect, it } from "vitest";
import { QueryExpansion } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import { QueryRewriteMode } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import { expansionOf, queryRewriteOf, rewriteModeOf } from "./query-rewrite-mode.ts";

describe("query rewrite mode", () => {
  it("reads query_rewrite, and the deprecated query_expansion in its own numbers", () => {
    expect(queryRewriteOf(undefined)).toBe(QueryRewriteMode.UNSPECIFIED);
    expect(queryRewriteOf({ queryRewrite: QueryRewriteMode.NONE, queryExpansion: QueryExpansion.UNSPECIFIED })).toBe(QueryRewriteMode.NONE);
    // The same numbers mean different modes: QueryExpansion 1 is REWRITE, QueryRewriteMode 1 is NONE.
    expect(queryRewriteOf({ queryRewrite: QueryRewriteMode.UNSPECIFIED, queryExpansion: QueryExpansion.REWRITE })).toBe(QueryRewriteMode.REWRITE);
    expect(queryRewriteOf({ queryRewrite: QueryRewriteMode.UNSPECIFIED, queryExpansion: QueryExpansion.HYDE })).toBe(QueryRewriteMode.HYDE);
    expect(queryRewriteOf({ queryRewrite: QueryRewriteMode.UNSPECIFIED, queryExpansion: QueryExpansion.MULTI_QUERY })).toBe(QueryRewriteMode.MULTI_QUERY);
    // Both set to the same mode is no contradiction.
    expect(queryRewriteOf({ queryRewrite: QueryRewriteMode.HYDE, queryExpansion: QueryExpansion.HYDE })).toBe(QueryRewriteMode.HYDE);
  });

  it("refuses both fields set to different modes, and numbers neither enum has", () => {
    expect(() => queryRewriteOf({ queryRewrite: QueryRewriteMode.HYDE, queryExpansion: QueryExpansion.MULTI_QUERY })).toThrow(InvalidInputError);
    expect(() => queryRewriteOf({ queryRewrite: QueryRewriteMode.NONE, queryExpansion: QueryExpansion.REWRITE })).toThrow(
      "settings.query_rewrite asks for none but the deprecated settings.query_expansion asks for rewrite: set query_rewrite alone",
    );
    expect(() => queryRewriteOf({ queryRewrite: 9 as QueryRewriteMode, queryExpansion: QueryExpansion.UNSPECIFIED })).toThrow(/query_rewrite 9 is not a query rewrite mode/);
    expect(() => queryRewriteOf({ queryRewrite: QueryRewriteMode.UNSPECIFIED, queryExpansion: 4 as QueryExpansion })).toThrow(/query_expansion 4 is not a query expansion mode/);
  });

  it("turns a mode into what retrieval runs and back", () => {
    expect(expansionOf(undefined)).toBeUndefined();
    expect(expansionOf(QueryRewriteMode.UNSPECIFIED)).toBeUndefined();
    expect(expansionOf(QueryRewriteMode.NONE)).toBe("none");
    expect(expansionOf(QueryRewriteMode.MULTI_QUERY)).toBe("multi_query");
    for (const mode of [QueryRewriteMode.UNSPECIFIED, QueryRewriteMode.NONE, QueryRewriteMode.REWRITE, QueryRewriteMode.HYDE, QueryRewriteMode.MULTI_QUERY]) {
      expect(rewriteModeOf(expansionOf(mode))).toBe(mode);
    }
  });
});
