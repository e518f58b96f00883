// Texts where BM25's statistics decide the order, shared by the search-engine contract suite and the
// SQLite keyword-table migration test. In the rare-word base alone "zephyr" and "quokka" are each in
// one chunk, so the chunk with zephyr twice leads; the common-word texts repeat "zephyr" in every
// chunk, so statistics that counted them too would make the word common and sink that chunk.

/** The rare-word base: RARE_WORD_QUESTION ranks chunks 0, 1 and 3, in that order, on these alone. */
export const RARE_WORD_TEXTS = [
  "A zephyr zephyr crossed the orchard at dawn.",
  "The quokka smiled at the visitors.",
  "Gravel roads need regrading after the thaw.",
  "Lighthouses guided ships along the rocky coast.",
  "Bakers proof their dough overnight.",
  "Moths circle the porch lamp at night.",
];

export const RARE_WORD_QUESTION = "zephyr quokka lighthouses";

/** Chunks of another base that make "zephyr" common there. */
export function commonWordTexts(count = 40): string[] {
  return Array.from({ length: count }, (_, i) => `Zephyr ${i} blew the long sails of ship number ${i} far away over open water for days on end.`);
}
