// Readable text from HTML, shared by the built-in HTML parser (web pages) and the Tika parser
// (Tika's XHTML). One walk over htmlparser2's SAX events: whitespace collapses as a browser would,
// block elements become line or paragraph breaks, headings become sections and, for Tika's
// output, <div class="page"> becomes a page.
import { Parser } from "htmlparser2";
import type { PageSpan, SectionSpan } from "../../lib/domain.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import { sectionsFromHeadings, type Heading } from "./section-spans.ts";

export interface HtmlTextOptions {
  /** Elements whose whole content is left out. */
  dropTags: ReadonlySet<string>;
  /** Class names of <div>s that each hold one page, numbered from 1 in document order. */
  pageClasses: readonly string[];
  /** Elements whose class or id matches are left out too (page chrome that is not in <nav>). */
  dropClassOrId?: RegExp;
  /** Honour "<p/>" as an empty element (XHTML) rather than an opening tag (HTML5). */
  selfClosingTags: boolean;
  /**
   * Asked once the <head> is read, for settings that depend on the document's <meta> (Tika's
   * markup differs by the type it parsed); what it returns overrides the settings above.
   */
  forDocument?: (meta: Record<string, string>) => Partial<Omit<HtmlTextOptions, "forDocument" | "selfClosingTags">>;
}

export interface HtmlText {
  text: string;
  sections: SectionSpan[];
  pages: PageSpan[];
  /** The <title>, whitespace collapsed; "" when absent. */
  title: string;
  /** <meta name content> pairs from the document; repeated names are joined with ", ". */
  meta: Record<string, string>;
}

/** For web pages: chrome, scripts and navigation are not content. */
export const WEB_PAGE_OPTIONS: HtmlTextOptions = {
  dropTags: new Set(["head", "script", "style", "noscript", "template", "nav", "footer", "svg", "math", "iframe", "object", "button", "select", "textarea"]),
  pageClasses: [],
  // The class words that mark menus and link farms on real sites (Wikipedia's language dropdown,
  // category links, "jump to content"); the same idea as Readability's "unlikely candidates",
  // kept short so that content is not lost to a false match.
  dropClassOrId: /(^|[\s_-])(menu|dropdown|navbox|navbar|sidebar|breadcrumbs?|catlinks|printfooter|editsection|jump|cookie|banner)($|[\s_-])/i,
  selfClosingTags: false,
};

/** For Tika's XHTML: everything in the body is content; its PDF parser marks pages with <div class="page">. */
export const TIKA_XHTML_OPTIONS: HtmlTextOptions = {
  dropTags: new Set(["head", "script", "style"]),
  pageClasses: ["page"],
  selfClosingTags: true,
};

// Elements that end a line, and elements that stand as a paragraph of their own.
const LINE_TAGS = new Set(["li", "dt", "dd", "tr", "option", "caption", "figcaption", "summary"]);
const PARAGRAPH_TAGS = new Set([
  "p", "div", "section", "article", "main", "header", "aside", "blockquote", "pre", "table", "thead", "tbody", "tfoot",
  "ul", "ol", "dl", "figure", "address", "details", "hr", "body", "html", "form", "fieldset", "center",
  "h1", "h2", "h3", "h4", "h5", "h6",
]);
const CELL_TAGS = new Set(["td", "th"]);
const HEADING_LEVEL: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };

/**
 * Deepest element nesting read. htmlparser2 keeps its open elements in an array it shifts at the
 * front, so each tag costs time in proportion to the depth: 80,000 nested <div><span> took 33 s
 * here, and a 3 MB file of them ran past the parse time limit. Real pages nest a few dozen deep;
 * browsers themselves stop nesting at a few hundred.
 */
export const MAX_HTML_DEPTH = 1_000;

interface Frame {
  name: string;
  drops: boolean;
  page: boolean;
  heading: boolean;
  pre: boolean;
  cells: number;
}

export function htmlToText(html: string, baseOptions: HtmlTextOptions = WEB_PAGE_OPTIONS): HtmlText {
  let options = baseOptions;
  const out = new TextWriter();
  const stack: Frame[] = [];
  const headings: Heading[] = [];
  const pages: PageSpan[] = [];
  const meta: Record<string, string> = {};
  let dropDepth = 0;
  let preDepth = 0;
  let titleText: string[] | undefined;
  let title = "";
  let heading: { level: number; parts: string[]; start?: number } | undefined;
  let page: { number: number; start?: number } | undefined;

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === "body" && baseOptions.forDocument) options = { ...baseOptions, ...baseOptions.forDocument(meta) };
        const frame: Frame = { name, drops: false, page: false, heading: false, pre: false, cells: 0 };
        stack.push(frame);
        if (stack.length > MAX_HTML_DEPTH) {
          throw new InvalidInputError(`the markup nests elements more than ${MAX_HTML_DEPTH.toLocaleString("en-US")} deep; no real page does`);
        }
        if (name === "title") titleText = [];
        if (name === "meta" && attributes.name && attributes.content !== undefined) {
          meta[attributes.name] = meta[attributes.name] ? `${meta[attributes.name]}, ${attributes.content}` : attributes.content;
        }
        if (options.dropTags.has(name) || isHidden(attributes) || isChrome(name, attributes, options.dropClassOrId)) {
          frame.drops = true;
          dropDepth++;
        }
        if (dropDepth > 0) return;

        if (name === "br") out.breakLine(1);
        else if (LINE_TAGS.has(name)) out.breakLine(1);
        else if (PARAGRAPH_TAGS.has(name)) out.breakLine(2);
        if (name === "li") out.prefix("- ");
        if (CELL_TAGS.has(name)) {
          const row = [...stack].reverse().find((f) => f.name === "tr");
          if (row && row.cells++ > 0) out.separate(" | ");
        }
        if (name === "pre") {
          frame.pre = true;
          preDepth++;
        }
        if (name in HEADING_LEVEL && !heading) {
          frame.heading = true;
          heading = { level: HEADING_LEVEL[name], parts: [] };
        }
        if (name === "div" && hasClass(attributes.class, options.pageClasses)) {
          if (page) closePage();
          frame.page = true;
          page = { number: pages.length + 1 };
        }
      },
      ontext(raw) {
        const data = raw.replace(/\0/g, "");
        if (titleText) titleText.push(data);
        if (dropDepth > 0) return;
        const start = out.write(data, preDepth > 0);
        if (start === undefined) return;
        if (heading) {
          heading.start ??= start;
          heading.parts.push(data);
        }
        if (page) page.start ??= start;
      },
      onclosetag(name) {
        if (name === "title" && titleText) {
          // Tika writes an empty title as "&#0;", which decodes to U+FFFD.
          title = collapse(titleText.join("").replace(/\ufffd/g, ""));
          titleText = undefined;
        }
        const frame = stack.pop();
        if (!frame) return;
        if (frame.drops) {
          dropDepth--;
          return;
        }
        if (dropDepth > 0) return;
        if (frame.pre) preDepth--;
        if (frame.heading && heading) {
          const text = collapse(heading.parts.join(""));
          if (text && heading.start !== undefined) headings.push({ level: heading.level, title: text, start: heading.start });
          heading = undefined;
        }
        if (frame.page && page) closePage();
        if (LINE_TAGS.has(name) || name === "br") out.breakLine(1);
        else if (PARAGRAPH_TAGS.has(name)) out.breakLine(2);
      },
    },
    { decodeEntities: true, recognizeSelfClosing: options.selfClosingTags },
  );

  function closePage(): void {
    if (!page) return;
    const start = page.start ?? out.length;
    pages.push({ number: page.number, start, end: Math.max(start, out.length) });
    page = undefined;
  }

  parser.write(html);
  parser.end();
  closePage();
  const text = out.toString();
  // Text between one page's end and the next page belongs to the earlier page: Tika writes a
  // slide's speaker notes right after the slide's <div>.
  pages.forEach((p, i) => {
    const next = i + 1 < pages.length ? pages[i + 1].start : text.length;
    p.end = Math.max(p.end, text.slice(0, next).trimEnd().length);
  });
  return { text, sections: sectionsFromHeadings(headings, text), pages, title, meta };
}

function isHidden(attributes: Record<string, string>): boolean {
  return "hidden" in attributes || attributes["aria-hidden"] === "true" || attributes.role === "navigation" || /display\s*:\s*none/i.test(attributes.style ?? "");
}

// Skins put feature flags such as "main-menu-pinned" on the outermost elements; those hold the content.
const NEVER_CHROME = new Set(["html", "body", "main", "article"]);

function isChrome(name: string, attributes: Record<string, string>, pattern: RegExp | undefined): boolean {
  return pattern !== undefined && !NEVER_CHROME.has(name) && (pattern.test(attributes.class ?? "") || pattern.test(attributes.id ?? ""));
}

function hasClass(classAttribute: string | undefined, wanted: readonly string[]): boolean {
  if (!classAttribute || wanted.length === 0) return false;
  return classAttribute.split(/\s+/).some((c) => wanted.includes(c));
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * Appends text with breaks decided lazily: a break or separator is only written once real text
 * follows it, so nested blocks never stack up blank lines and the text never ends in whitespace.
 */
class TextWriter {
  private parts: string[] = [];
  length = 0;
  private pendingBreak = 0;
  private pendingSpace = false;
  private pendingSeparator = "";
  private pendingPrefix = "";
  private lastChar = "";

  breakLine(newlines: 1 | 2): void {
    if (this.length > 0) this.pendingBreak = Math.max(this.pendingBreak, newlines);
    this.pendingPrefix = "";
  }

  separate(separator: string): void {
    if (this.length > 0) this.pendingSeparator = separator;
  }

  prefix(prefix: string): void {
    this.pendingPrefix = prefix;
  }

  /** Returns the offset where the text's first character landed, or undefined when it was only whitespace. */
  write(data: string, preformatted: boolean): number | undefined {
    const text = preformatted ? data : data.replace(/\s+/g, " ");
    const content = preformatted ? text : text.trim();
    if (content === "" || (preformatted && content.trim() === "" && this.pendingBreak > 0)) {
      if (text.length > 0) this.pendingSpace = true;
      return undefined;
    }
    if (this.length > 0) {
      if (this.pendingBreak > 0) this.append("\n".repeat(this.pendingBreak));
      else if (this.pendingSeparator) this.append(this.pendingSeparator);
      else if ((this.pendingSpace || (!preformatted && text.startsWith(" "))) && !/\s/.test(this.lastChar)) this.append(" ");
    }
    if (this.pendingPrefix) this.append(this.pendingPrefix);
    this.pendingBreak = 0;
    this.pendingSeparator = "";
    this.pendingPrefix = "";
    const start = this.length;
    this.append(content);
    this.pendingSpace = !preformatted && text.endsWith(" ");
    return start;
  }

  private append(s: string): void {
    this.parts.push(s);
    this.length += s.length;
    this.lastChar = s[s.length - 1];
  }

  toString(): string {
    return this.parts.join("");
  }
}
