import type { ChatModel } from "../../chat-models/chat-model.ts";
import { complete } from "../../chat-models/chat-completion.ts";
import type { Reranker, RerankScore } from "./reranker.ts";

/** Characters of a passage the model is shown; the head of a chunk carries its topic. */
const PASSAGE_CHARS = 2_000;
/** Candidates scored at once: each is its own request, and endpoints limit concurrency. */
const CONCURRENCY = 4;

const INSTRUCTION =
  "You judge search results. Rate how well the passage answers the query on a scale from 0 (unrelated) to 10 (answers it fully). Reply with the number only.";

/**
 * Pointwise reranking through the configured chat model: each candidate is scored on its own, 0–10.
 * Slower and coarser than a cross-encoder, but needs nothing beyond the model already configured.
 * A reply without a number fails the whole rerank (the fused order then stands), since a partial
 * order would mix judged and unjudged candidates.
 */
export class LlmReranker implements Reranker {
  readonly name: string;
  constructor(private readonly model: ChatModel) {
    this.name = `llm reranker (${model.name})`;
  }

  async rerank(query: string, texts: string[], options: { signal?: AbortSignal } = {}): Promise<RerankScore[]> {
    const scores: RerankScore[] = new Array(texts.length);
    let next = 0;
    const worker = async () => {
      while (next < texts.length) {
        const index = next++;
        const reply = await complete(
          this.model,
          [
            { role: "system", content: INSTRUCTION },
            { role: "user", content: `Query: ${query}\n\nPassage: ${texts[index].slice(0, PASSAGE_CHARS)}\n\nScore (0-10):` },
          ],
          options.signal,
        );
        const match = /-?\d+(?:\.\d+)?/.exec(reply);
        if (!match) throw new Error(`the model's reply for candidate ${index + 1} holds no score`);
        scores[index] = { index, score: Math.min(10, Math.max(0, Number(match[0]))) };
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, texts.length) }, worker));
    return scores;
  }
}
