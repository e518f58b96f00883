import { FailedPreconditionError } from "../../../lib/errors.ts";
import type { ChatModel } from "../chat-models/chat-model.ts";
import { complete } from "../chat-models/chat-completion.ts";

export type QueryExpansionMode = "rewrite" | "hyde" | "multi_query";
/** A caller's choice: a mode, or "none" — the question as asked, even where an assistant's default expands it. */
export type QueryExpansionChoice = QueryExpansionMode | "none";

/** One search to run: `text` goes to the keyword list, `embedText` is embedded for the vector list. */
export interface PlannedQuery {
  text: string;
  embedText: string;
}

export interface ExpandedQueries {
  queries: PlannedQuery[];
  /** Set when the model's reply was unusable and the question was searched as asked. */
  fallbackReason?: string;
}

export const DEFAULT_QUERY_VARIANTS = 3;
/** More variants cost a search each and add little past a handful. */
export const MAX_QUERY_VARIANTS = 8;
/** A hypothetical passage longer than this is cut: the embedder reads a few hundred tokens at most. */
const HYDE_PASSAGE_CHARS = 1_500;

const PROMPTS: Record<QueryExpansionMode, (n: number) => string> = {
  rewrite: () =>
    "Rewrite the user's question as one short, standalone search query for a document search engine: keep every name, number and technical term, drop greetings and filler. Reply with the query only, in the question's language.",
  hyde: () =>
    "Write one short passage (at most 5 sentences) that would answer the user's question, as it might appear in a document. If you do not know the facts, write a plausible passage anyway: it is used only to find similar text. Reply with the passage only, in the question's language.",
  multi_query: (n) =>
    `Write ${n} different search queries that together cover what the user's question asks, using other words, synonyms or narrower aspects. One query per line, no numbering, no commentary, in the question's language.`,
};

/**
 * Turns a question into the searches retrieval runs, through the chat model. Needs a model: asked
 * without one, it refuses (FailedPrecondition) rather than quietly searching the question as asked,
 * so a caller who chose a mode knows it did not happen.
 */
export async function expandQuery(question: string, mode: QueryExpansionMode, model: ChatModel | undefined, options: { variants?: number; signal?: AbortSignal } = {}): Promise<ExpandedQueries> {
  if (!model) {
    throw new FailedPreconditionError(
      `query expansion "${mode}" needs a chat model, and none is configured: set OPENAI_BASE_URL and QUARRY_CHAT_MODEL, or search without query expansion`,
    );
  }
  const variants = Math.min(MAX_QUERY_VARIANTS, options.variants || DEFAULT_QUERY_VARIANTS);
  const reply = await complete(
    model,
    [
      { role: "system", content: PROMPTS[mode](variants) },
      { role: "user", content: question },
    ],
    options.signal,
  );
  const asked: PlannedQuery = { text: question, embedText: question };
  switch (mode) {
    case "rewrite": {
      const rewritten = cleanLine(reply.split("\n").find((line) => cleanLine(line)) ?? "");
      return rewritten ? { queries: [{ text: rewritten, embedText: rewritten }] } : { queries: [asked], fallbackReason: "the model's rewrite was empty" };
    }
    case "hyde": {
      const passage = reply.slice(0, HYDE_PASSAGE_CHARS).trim();
      // The keyword list keeps the question: a made-up passage's words would match made-up facts.
      return passage ? { queries: [{ text: question, embedText: passage }] } : { queries: [asked], fallbackReason: "the model's passage was empty" };
    }
    case "multi_query": {
      const seen = new Set([question.toLowerCase()]);
      const extra = reply
        .split("\n")
        .map(cleanLine)
        .filter((line) => line && !seen.has(line.toLowerCase()) && Boolean(seen.add(line.toLowerCase())))
        .slice(0, variants);
      // The question itself stays one of the searches: a variant may drift, the question cannot.
      return { queries: [asked, ...extra.map((text) => ({ text, embedText: text }))], ...(extra.length ? {} : { fallbackReason: "the model wrote no usable variants" }) };
    }
  }
}

/** A line without list numbering, bullets or wrapping quotes. */
function cleanLine(line: string): string {
  return line
    .trim()
    .replace(/^(?:\d+[.)]|[-*•]|query\s*\d*:)\s*/i, "")
    .replace(/^["'“”「]+|["'“”」]+$/g, "")
    .trim();
}
