/** Counts tokens as the embedding model will, so chunk sizes mean what the model sees. */
export interface TokenCounter {
  /** Tokens of text without the model's special tokens ([CLS], [SEP]). */
  count(text: string): number;
}
