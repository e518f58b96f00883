import type { Citation } from "./citation.ts";
import type { ContextChunk } from "./context-builder.ts";

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
 * The first time a context chunk is cited its Citation is emitted, just before the marker's text.
 */
export class CitationMapper {
  readonly #byNumber: Map<number, ContextChunk>;
  readonly #cited = new Map<number, Citation>();
  readonly #dropped: number[] = [];
  #pending = "";

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

  get citations(): Citation[] {
    return [...this.#cited.values()];
  }

  #drain(final: boolean): MappedEvent[] {
    const out: MappedEvent[] = [];
    const text = (delta: string) => {
      if (!delta) return;
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
        for (const n of known) {
          if (!this.#cited.has(n)) {
            const citation = toCitation(this.#byNumber.get(n)!);
            this.#cited.set(n, citation);
            out.push({ type: "citation", citation });
          }
          text(`[${n}]`);
        }
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

export function toCitation(chunk: ContextChunk): Citation {
  const { hit } = chunk;
  const c = hit.chunk;
  return {
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
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= SNIPPET_CHARS) return flat;
  const cut = flat.slice(0, SNIPPET_CHARS);
  const space = cut.lastIndexOf(" ");
  // CJK text has no spaces to break at; cut at the limit then.
  return `${space > SNIPPET_CHARS * 0.6 ? cut.slice(0, space) : cut}…`;
}
