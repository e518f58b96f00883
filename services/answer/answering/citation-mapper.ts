import type { Citation } from "./citation.ts";
import type { ContextChunk } from "./context-builder.ts";
import { parentCitation } from "./parent-context.ts";

export type MappedEvent = { type: "text"; delta: string } | { type: "citation"; citation: Citation };

// A marker: [n], [n, m], 【n】 (what models writing Chinese use), ［n］, with ASCII or full-width
// digits. Spaces or tabs before it belong to it, so a dropped marker leaves no stray space.
const OPENERS = /[[【［]/;
const COMPLETE = /^([ \t]*)[[【［][ \t]*([0-9０-９]{1,4}(?:[ \t]*[,，、;；][ \t]*[0-9０-９]{1,4})*)[ \t]*[\]】］]/;
// Text that could still grow into a marker once more deltas arrive.
const PREFIX = /^[ \t]*[[【［][ \t]*(?:[0-9０-９]{1,4}(?:[ \t]*[,，、;；][ \t]*(?:[0-9０-９]{1,4})?)*)?[ \t]*$/;
const TRAILING_SPACE = /[ \t]*$/;
const MAX_HELD = 64;
const SNIPPET_CHARS = 240;

/**
 * Turns the model's streamed text into text deltas and citations. Hand-written rather than a regex
 * over the whole answer because markers arrive split across deltas ("[1" then "2]") and the answer
 * must stream: only text that might still be the start of a marker is held back.
 *
 * Each marker is rewritten as one `[n]` per cited number. A number not in the context is removed
 * from the text and counted in `dropped` — the model invented it, and it must not look like a source.
 * The first time a context chunk is cited its Citation is emitted, just before the marker's text
 * (for a parent entry: the first time each of its children is the one a sentence comes from).
 */
export class CitationMapper {
  readonly #byNumber: Map<number, ContextChunk>;
  readonly #cited = new Map<number, Citation>();
  readonly #spans = new Set<string>();
  readonly #all: Citation[] = [];
  readonly #dropped: number[] = [];
  #pending = "";
  /** The text shown since the last marker: the sentence the next marker cites. */
  #sinceMarker = "";
  /** The sentence the last marker cited: "… text.[1][2]" cites it twice. */
  #lastSentence = "";

  constructor(context: readonly ContextChunk[]) {
    this.#byNumber = new Map(context.map((c) => [c.number, c]));
  }

  /** Feeds one delta of model output; returns what can be shown now. */
  push(delta: string): MappedEvent[] {
    this.#pending += delta;
    return this.#drain(false);
  }

  /** Flushes held-back text at the end of the stream. */
  end(): MappedEvent[] {
    return this.#drain(true);
  }

  /** Context numbers cited, in the order first cited. */
  get used(): number[] {
    return [...this.#cited.keys()];
  }

  /** Invented numbers removed from the text, one entry per occurrence. */
  get dropped(): number[] {
    return [...this.#dropped];
  }

  /** Every citation emitted, in order: one per context entry, or per child of a parent entry. */
  get citations(): Citation[] {
    return [...this.#all];
  }

  #drain(final: boolean): MappedEvent[] {
    const out: MappedEvent[] = [];
    const text = (delta: string) => {
      if (!delta) return;
      this.#sinceMarker += delta;
      const last = out.at(-1);
      if (last?.type === "text") last.delta += delta;
      else out.push({ type: "text", delta });
    };

    while (this.#pending) {
      const opener = this.#pending.search(OPENERS);
      if (opener < 0) {
        // Trailing spaces may precede a marker in the next delta; hold them until we know.
        const keep = final ? "" : TRAILING_SPACE.exec(this.#pending)![0];
        text(this.#pending.slice(0, this.#pending.length - keep.length));
        this.#pending = keep;
        break;
      }
      const start = opener - TRAILING_SPACE.exec(this.#pending.slice(0, opener))![0].length;
      text(this.#pending.slice(0, start));
      this.#pending = this.#pending.slice(start);

      const match = COMPLETE.exec(this.#pending);
      if (match) {
        this.#pending = this.#pending.slice(match[0].length);
        const numbers = [...new Set(match[2].normalize("NFKC").split(/[^0-9]+/).filter(Boolean).map(Number))];
        const known = numbers.filter((n) => this.#byNumber.has(n));
        this.#dropped.push(...numbers.filter((n) => !this.#byNumber.has(n)));
        if (known.length === 0) continue;
        text(match[1]);
        const sentence = this.#sinceMarker.trim() ? this.#sinceMarker : this.#lastSentence;
        this.#lastSentence = sentence;
        for (const n of known) {
          // A parent entry's sentences may come from different children: each child cited gets its
          // own citation under the same marker. A plain chunk is cited once.
          const citation = toCitation(this.#byNumber.get(n)!, sentence);
          const span = `${n}\u0000${citation.chunkId}`;
          if (!this.#spans.has(span)) {
            this.#spans.add(span);
            if (!this.#cited.has(n)) this.#cited.set(n, citation);
            this.#all.push(citation);
            out.push({ type: "citation", citation });
          }
          text(`[${n}]`);
        }
        this.#sinceMarker = "";
        continue;
      }
      if (!final && this.#pending.length <= MAX_HELD && PREFIX.test(this.#pending)) break;
      // Not a marker (e.g. "[see below]"): let the text through up to and including the bracket.
      const through = this.#pending.search(OPENERS) + 1;
      text(this.#pending.slice(0, through));
      this.#pending = this.#pending.slice(through);
    }
    return out;
  }
}

/**
 * The citation of a context entry. For a parent entry it points at the child whose text the cited
 * sentence (the text since the previous marker) comes from, and names the parent.
 */
export function toCitation(chunk: ContextChunk, sentence = ""): Citation {
  const { hit } = chunk;
  const c = hit.chunk;
  const citation: Citation = {
    marker: chunk.number,
    chunkId: c.id,
    documentId: c.documentId,
    knowledgeBaseId: c.knowledgeBaseId,
    fileName: hit.fileName,
    page: c.page,
    pageEnd: c.pageEnd,
    sectionPath: [...c.sectionPath],
    start: c.start,
    end: c.end,
    snippet: snippet(c.text),
    score: hit.score,
  };
  return chunk.parent ? parentCitation(citation, chunk.parent, sentence, snippet) : citation;
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= SNIPPET_CHARS) return flat;
  const cut = flat.slice(0, SNIPPET_CHARS);
  const space = cut.lastIndexOf(" ");
  // CJK text has no spaces to break at; cut at the limit then.
  return `${space > SNIPPET_CHARS * 0.6 ? cut.slice(0, space) : cut}…`;
}
