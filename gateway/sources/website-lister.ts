// A website source: pages reached from the start URLs (and a sitemap's <loc> entries) by following
// links on the same host and port, breadth first, to max_depth. robots.txt is fetched once per sync
// and obeyed for the configured user agent; requests are paced to requests_per_second. A page that
// answers 404 or 410 is not listed (the sync deletes its document); one that answers anything else
// unexpected, or not at all, is listed as unreadable and kept. The change token is the content's
// hash: the page is fetched anyway, to find its links.
import { createHash } from "node:crypto";
import { Parser } from "htmlparser2";
import robotsParserModule from "robots-parser";
import { InvalidInputError } from "../../lib/errors.ts";
import type { Listing, SourceLister } from "./lister.ts";

// The package's typings declare the module untyped; its export is this function.
interface RobotsRules {
  isAllowed(url: string, userAgent?: string): boolean | undefined;
}
const robotsParser = robotsParserModule as unknown as (url: string, robotsTxt: string) => RobotsRules;

export interface WebsiteSettings {
  startUrls: string[];
  sitemapUrl: string;
  maxDepth: number;
  maxPages: number;
  requestsPerSecond: number;
  userAgent: string;
}

const DEFAULT_MAX_PAGES = 1_000;
const DEFAULT_RATE = 2;
const DEFAULT_AGENT = "QuarryBot";
const GONE = new Set([404, 410]);

export function checkWebsiteSettings(settings: WebsiteSettings): void {
  const urls = [...settings.startUrls, ...(settings.sitemapUrl ? [settings.sitemapUrl] : [])];
  if (urls.length === 0) throw new InvalidInputError("a website source needs start URLs or a sitemap URL");
  for (const url of urls) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new InvalidInputError(`"${url}" is not a URL`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new InvalidInputError(`${url}: a website source reads http and https URLs only`);
  }
  if (settings.requestsPerSecond < 0) throw new InvalidInputError("requests_per_second may not be negative");
}

/** The page's URL as an item id: no fragment, since #a and #b are the same page. */
export function pageId(url: URL): string {
  const copy = new URL(url);
  copy.hash = "";
  return copy.href;
}

const EXTENSION_BY_TYPE: Record<string, string> = {
  "text/html": ".html",
  "application/xhtml+xml": ".html",
  "text/plain": ".txt",
  "text/markdown": ".md",
  "application/pdf": ".pdf",
  "application/json": ".json",
  "text/csv": ".csv",
};

/** The document name of a page: host and path, with an extension the reading rule knows from its type. */
export function pageName(url: URL, mimeType: string): string {
  let path = url.pathname.endsWith("/") ? `${url.pathname}index` : url.pathname;
  if (url.search) path += `_${url.search.slice(1).replace(/[^A-Za-z0-9=_-]+/g, "_")}`;
  const extension = EXTENSION_BY_TYPE[mimeType];
  if (extension && !path.toLowerCase().endsWith(extension) && !(extension === ".html" && path.toLowerCase().endsWith(".htm"))) path += extension;
  return `${url.host}${path}`;
}

export function linksOf(html: string, base: URL): URL[] {
  const links: URL[] = [];
  const parser = new Parser({
    onopentag(name, attributes) {
      if (name !== "a" || !attributes.href) return;
      try {
        links.push(new URL(attributes.href, base));
      } catch {
        // Not a URL: not a link to follow.
      }
    },
  });
  parser.write(html);
  parser.end();
  return links;
}

function sitemapLocations(xml: string): string[] {
  const locations: string[] = [];
  let inLoc = false;
  let text = "";
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === "loc") (inLoc = true), (text = "");
      },
      ontext(data) {
        if (inLoc) text += data;
      },
      onclosetag(name) {
        if (name === "loc") (inLoc = false), locations.push(text.trim());
      },
    },
    { xmlMode: true },
  );
  parser.write(xml);
  parser.end();
  return locations;
}

type Fetch = typeof fetch;

export class WebsiteLister implements SourceLister {
  private nextRequestAt = 0;
  private readonly interval: number;
  private readonly agent: string;
  private readonly robots = new Map<string, RobotsRules | undefined>();

  constructor(
    private readonly settings: WebsiteSettings,
    private readonly fetchImpl: Fetch = fetch,
  ) {
    this.interval = 1000 / (settings.requestsPerSecond > 0 ? settings.requestsPerSecond : DEFAULT_RATE);
    this.agent = settings.userAgent || DEFAULT_AGENT;
  }

  async *list(): AsyncIterable<Listing> {
    const starts = this.settings.startUrls.map((u) => new URL(u));
    if (this.settings.sitemapUrl) {
      const response = await this.request(new URL(this.settings.sitemapUrl));
      if (!response.ok) throw new InvalidInputError(`the sitemap ${this.settings.sitemapUrl} answered ${response.status}`);
      for (const loc of sitemapLocations(await response.text())) {
        try {
          starts.push(new URL(loc));
        } catch {
          // A <loc> that is no URL names nothing to read.
        }
      }
    }
    if (starts.length === 0) throw new InvalidInputError("the website source names no page to start from");
    const hosts = new Set(starts.map((u) => u.host));
    const limit = this.settings.maxPages || DEFAULT_MAX_PAGES;
    const queued = new Set<string>();
    let frontier = starts.map((url) => ({ url, depth: 0 }));
    let listed = 0;
    let reachedAny = false;
    while (frontier.length > 0 && listed < limit) {
      const next: typeof frontier = [];
      for (const { url, depth } of frontier) {
        const id = pageId(url);
        if (queued.has(id) || listed >= limit) continue;
        queued.add(id);
        if (!(await this.allowed(url))) continue;
        let response: Response;
        try {
          response = await this.request(url);
        } catch (error) {
          yield { unreadable: { id, reason: `${url.href} did not answer (${(error as Error).message})` } };
          continue;
        }
        reachedAny = true;
        if (GONE.has(response.status)) continue;
        if (!response.ok) {
          yield { unreadable: { id, reason: `${url.href} answered ${response.status} ${response.statusText}` } };
          continue;
        }
        const bytes = new Uint8Array(await response.arrayBuffer());
        const mimeType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
        const modified = response.headers.get("last-modified");
        listed++;
        yield {
          item: {
            id,
            name: pageName(url, mimeType),
            changeToken: createHash("sha256").update(bytes).digest("hex"),
            mimeType,
            ...(modified && !Number.isNaN(Date.parse(modified)) ? { modifiedAt: new Date(modified) } : {}),
            read: async () => bytes,
          },
        };
        if (depth < this.settings.maxDepth && mimeType.includes("html")) {
          for (const link of linksOf(new TextDecoder().decode(bytes), url)) {
            if ((link.protocol === "http:" || link.protocol === "https:") && hosts.has(link.host)) next.push({ url: link, depth: depth + 1 });
          }
        }
      }
      frontier = next;
    }
    // Nothing answered at all: the site is down, and listing it as empty would delete every page.
    if (!reachedAny) throw new InvalidInputError(`no start URL of the website answered (${starts.map((u) => u.href).join(", ")})`);
  }

  private async allowed(url: URL): Promise<boolean> {
    if (!this.robots.has(url.origin)) {
      const robotsUrl = new URL("/robots.txt", url.origin);
      let rules: RobotsRules | undefined;
      try {
        const response = await this.request(robotsUrl);
        // No robots.txt (or one that does not answer): nothing is disallowed.
        if (response.ok) rules = robotsParser(robotsUrl.href, await response.text());
      } catch {
        rules = undefined;
      }
      this.robots.set(url.origin, rules);
    }
    return this.robots.get(url.origin)?.isAllowed(url.href, this.agent) ?? true;
  }

  /** Paced: a product rate limit toward someone else's server, not a synchronisation. */
  private async request(url: URL): Promise<Response> {
    const wait = this.nextRequestAt - Date.now();
    this.nextRequestAt = Math.max(Date.now(), this.nextRequestAt) + this.interval;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return this.fetchImpl(url, { headers: { "user-agent": this.agent }, redirect: "follow", signal: AbortSignal.timeout(30_000) });
  }
}
