// The retrieval options `quarry search`, `quarry ask` and `quarry eval` share: flags in, RetrievalSettings fields
// out, and the lines that report what retrieval did (degradation, rerank, rewritten queries).
import { InvalidArgumentError, Option, type Command } from "commander";
import type { RetrievalNotes, RetrievalSettings } from "../gen/quarry/answer/v1/answer_pb.ts";
import { QueryRewriteMode } from "../gen/quarry/common/v1/assistant_pb.ts";
import { FusionMethod } from "../gen/quarry/common/v1/common_pb.ts";

/** How hybrid fuses its lists, by the names the CLI takes (`--fusion`). */
export const FUSION_METHODS = { rrf: FusionMethod.RRF, convex: FusionMethod.CONVEX } as const;
export type FusionName = keyof typeof FUSION_METHODS;

/** The query rewrite modes by the names the CLI takes: `--expand`, and `quarry assistant --rewrite`. */
export const QUERY_REWRITES = {
  none: QueryRewriteMode.NONE,
  rewrite: QueryRewriteMode.REWRITE,
  hyde: QueryRewriteMode.HYDE,
  "multi-query": QueryRewriteMode.MULTI_QUERY,
} as const;
export type QueryRewriteName = keyof typeof QUERY_REWRITES;

export interface RetrievalFlags {
  rerank?: boolean;
  expand?: QueryRewriteName;
  variants?: number;
  neighbours?: number;
  bm25Fill?: boolean;
  filter?: Record<string, string>;
  fusion?: FusionName;
  alpha?: number;
}

/** Adds the retrieval option flags to a command. */
export function addRetrievalFlags(command: Command): Command {
  return command
    .option("--rerank", "rerank the fused hits (QUARRY_RERANK_URL, or the chat model)")
    .addOption(new Option("--expand <how>", "rewrite the question through the chat model first (none: as asked, over an assistant's default)").choices(Object.keys(QUERY_REWRITES)))
    .option("--variants <n>", "queries for --expand multi-query (default 3)", count(1, 8))
    .option("--neighbours <n>", "merge each hit with n adjacent chunks on each side", count(0, 5))
    .option("--bm25-fill", "fill a short vector/hybrid list with keyword hits")
    .option("--filter <key=value...>", "only documents whose metadata has these values", metadataPair, undefined)
    .addOption(new Option("--fusion <how>", "how hybrid fuses keyword and vector hits: rrf (ranks, the default) or convex (normalised scores)").choices(Object.keys(FUSION_METHODS)))
    .option("--alpha <weight>", "with --fusion convex: the vector list's weight, 0 to 1 (default 0.8)", fraction);
}

/** The settings fields the flags stand for. */
export function retrievalSettingsOf(flags: RetrievalFlags): Partial<RetrievalSettings> {
  return {
    rerank: Boolean(flags.rerank),
    queryRewrite: flags.expand ? QUERY_REWRITES[flags.expand] : QueryRewriteMode.UNSPECIFIED,
    queryVariants: flags.variants ?? 0,
    neighbourChunks: flags.neighbours ?? 0,
    bm25Fill: Boolean(flags.bm25Fill),
    metadataEquals: flags.filter ?? {},
    fusion: flags.fusion ? FUSION_METHODS[flags.fusion] : FusionMethod.UNSPECIFIED,
    ...(flags.alpha !== undefined ? { convexAlpha: flags.alpha } : {}),
  };
}

/** One line per thing retrieval did or could not do; none when it just searched. */
export function describeNotes(notes: RetrievalNotes | undefined): string {
  if (!notes) return "";
  const lines = [
    notes.degraded ? `degraded: ${notes.degraded}` : "",
    notes.rerankSkipped ? `rerank skipped: ${notes.rerankSkipped}` : notes.reranker ? `reranked ${notes.reranked} candidates with ${notes.reranker}` : "",
    notes.queries.length ? `searched: ${notes.queries.map((q) => JSON.stringify(q)).join(", ")}` : "",
    // Degraded, every hit is a keyword hit: the line above says so already.
    notes.fallbackHits && !notes.degraded ? `${notes.fallbackHits} keyword hit(s) filled top-k (marked fallback)` : "",
  ];
  return lines.filter(Boolean).map((line) => `${line}\n`).join("");
}

function count(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`It must be a whole number from ${min} to ${max}.`);
    return n;
  };
}

/** A convex fusion weight from the command line: 0 to 1. */
export function fraction(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError("It must be a number from 0 to 1, e.g. --alpha 0.8.");
  return n;
}

function metadataPair(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const at = value.indexOf("=");
  if (at <= 0) throw new InvalidArgumentError("It must be key=value, e.g. --filter lang=en.");
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}
