import { Command } from "commander";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { RetrievalNotesSchema } from "../gen/quarry/answer/v1/answer_pb.ts";
import { QueryRewriteMode } from "../gen/quarry/common/v1/assistant_pb.ts";
import { FusionMethod } from "../gen/quarry/common/v1/common_pb.ts";
import { addRetrievalFlags, describeNotes, retrievalSettingsOf, type RetrievalFlags } from "./retrieval-flags.ts";

function parse(args: string[]): RetrievalFlags {
  const command = addRetrievalFlags(new Command("search").exitOverride().configureOutput({ writeErr: () => {} })).argument("<q>");
  command.parse(["q", ...args], { from: "user" });
  return command.opts<RetrievalFlags>();
}

describe("retrieval flags", () => {
  it("turn into the settings fields", () => {
    const flags = parse(["--rerank", "--expand", "multi-query", "--variants", "4", "--neighbours", "1", "--bm25-fill", "--filter", "team=roads", "--filter", "lang=en=x", "--fusion", "convex", "--alpha", "0.6"]);
    expect(retrievalSettingsOf(flags)).toEqual({
      rerank: true,
      queryRewrite: QueryRewriteMode.MULTI_QUERY,
      queryVariants: 4,
      neighbourChunks: 1,
      bm25Fill: true,
      metadataEquals: { team: "roads", lang: "en=x" },
      fusion: FusionMethod.CONVEX,
      convexAlpha: 0.6,
    });
  });

  it("default to a plain search", () => {
    expect(retrievalSettingsOf(parse([]))).toEqual({ rerank: false, queryRewrite: QueryRewriteMode.UNSPECIFIED, queryVariants: 0, neighbourChunks: 0, bm25Fill: false, metadataEquals: {}, fusion: FusionMethod.UNSPECIFIED });
  });

  it("refuse what makes no sense before any request", () => {
    expect(() => parse(["--expand", "magic"])).toThrow(/Allowed choices are none, rewrite, hyde, multi-query/);
    expect(() => parse(["--neighbours", "9"])).toThrow(/whole number from 0 to 5/);
    expect(() => parse(["--filter", "=x"])).toThrow(/key=value/);
    expect(() => parse(["--fusion", "sum"])).toThrow(/Allowed choices are rrf, convex/);
    expect(() => parse(["--alpha", "1.2"])).toThrow(/number from 0 to 1/);
  });

  it("describe what retrieval did, one line each", () => {
    const notes = create(RetrievalNotesSchema, { degraded: "vector search unavailable (down)", rerankSkipped: "tei reranker failed: HTTP 500", reranker: "tei", queries: ["a", "b"], fallbackHits: 2 });
    expect(describeNotes(notes)).toBe('degraded: vector search unavailable (down)\nrerank skipped: tei reranker failed: HTTP 500\nsearched: "a", "b"\n');
    expect(describeNotes(create(RetrievalNotesSchema, { fallbackHits: 2, reranker: "tei", reranked: 9 }))).toBe("reranked 9 candidates with tei\n2 keyword hit(s) filled top-k (marked fallback)\n");
    expect(describeNotes(create(RetrievalNotesSchema, {}))).toBe("");
  });
});
