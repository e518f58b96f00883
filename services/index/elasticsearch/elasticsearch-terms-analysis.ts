// Which analysis Quarry's Elasticsearch chunk indices get. A full Elasticsearch distribution has the
// analysis-common module, and then the engine stems exactly as OpenSearch does (the same whitespace
// + lowercase + porter_stem analyzer). The Maven Central zip Quarry runs locally and in CI lacks it
// (no porter_stem, no stemmer, no whitespace tokenizer), and neither the module nor a plugin of it
// is published there, so Quarry stems the terms itself (english-stems.ts) and the field uses the
// built-in `whitespace` analyzer, which does not lower-case — text-segmenter.ts already did.
// Quarry-side Porter was chosen over the server's hunspell filter with Debian's en_US dictionary
// because it is the very algorithm OpenSearch and FTS5 run (measured identical on all but 1 of
// SciFact's 36,011 terms), where hunspell's dictionary stems differ by design, and it needs nothing
// installed beside the server.
import type { Client } from "@elastic/elasticsearch";
import { ENGINE_PORTER_ANALYSIS, QUARRY_STEMS_TERMS, type TermsAnalysis } from "../document-store/document-store-engine.ts";
import { isResponseError } from "./elasticsearch-errors.ts";

export const QUARRY_PORTER_ANALYSIS: TermsAnalysis = { name: QUARRY_STEMS_TERMS, settings: {}, searchTermsAnalyzer: "whitespace" };

/**
 * Asks the node to run the engine-side analyzer once: it answers 400 (unknown filter or tokenizer)
 * when analysis-common is missing. Any other failure (the node is down) is thrown, so the next
 * index creation asks again rather than settling on a guess.
 */
export async function elasticsearchTermsAnalysis(client: Client): Promise<TermsAnalysis> {
  try {
    const { tokens } = await client.indices.analyze({ tokenizer: "whitespace", filter: ["lowercase", "porter_stem"], text: "Runs" });
    if (tokens?.length === 1 && tokens[0].token === "run") return ENGINE_PORTER_ANALYSIS;
    return QUARRY_PORTER_ANALYSIS;
  } catch (error) {
    if (isResponseError(error, 400)) return QUARRY_PORTER_ANALYSIS;
    throw error;
  }
}
