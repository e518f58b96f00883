// The console in a real browser: Debian's Chromium (/usr/bin/chromium) driven by playwright-core,
// with the flags that keep it off the network. Without it a suite is skipped with one loud line, or
// fails when QUARRY_REQUIRE_ENGINES=1 (CI installs it in .ci/run). Every page records its console
// errors and uncaught exceptions, and a test fails on any it did not expect.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import type { Requirement } from "./engines.ts";

/** Debian's Chromium; QUARRY_CHROMIUM names another build (or a missing one, to see the skip). */
export const CHROMIUM = process.env.QUARRY_CHROMIUM?.trim() || "/usr/bin/chromium";
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Screenshots of each screen, to look at (docs/console/ holds the chosen ones). */
export const SCREENSHOT_DIR = join(REPO_ROOT, "test-output", "console");

export const chromiumRequirement: Requirement = {
  value: existsSync(CHROMIUM) ? CHROMIUM : undefined,
  requiredBy: "QUARRY_REQUIRE_ENGINES",
  missing: `${CHROMIUM} is not installed`,
  hint: "Install it with apt-get install -y chromium (.ci/run does)",
};

/** Builds console/dist when it is missing or stale (npm test has already done it: then a no-op). */
export function ensureConsoleBuilt(): void {
  const run = spawnSync(process.execPath, [join(REPO_ROOT, "console", "scripts", "ensure-built.mjs")], { stdio: "inherit" });
  if (run.status !== 0) throw new Error("the console did not build (console/scripts/ensure-built.mjs)");
}

export async function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    // playwright-core adds its own --headless; the brief's flags keep Chromium from reaching out.
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and page errors so far, minus those an `allow` pattern matched. */
  errors(): string[];
  /** Console errors matching this pattern are expected (e.g. the 401 before a key is given). */
  allow(pattern: RegExp): void;
  screenshot(name: string, options?: { fullPage?: boolean }): Promise<string>;
}

export async function watchedPage(browser: Browser, viewport = { width: 1366, height: 860 }): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport, locale: "en-GB" });
  const page = await context.newPage();
  const errors: string[] = [];
  const allowed: RegExp[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  page.on("crash", () => errors.push("the page crashed"));
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  return {
    page,
    context,
    errors: () => errors.filter((e) => !allowed.some((p) => p.test(e))),
    allow: (pattern) => allowed.push(pattern),
    async screenshot(name, { fullPage = true } = {}) {
      const path = join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path, fullPage });
      return path;
    },
  };
}

/** What a console suite drives: a Quarry (embedded or distributed) that serves the console at `url`. */
export interface ConsoleServer {
  url: string;
  stop(): Promise<void>;
}

/** One suite's Quarry, Chromium and watched tab; read inside the suite's tests, once its beforeAll has run. */
export interface ConsoleSession<Q extends ConsoleServer> {
  readonly quarry: Q;
  readonly browser: Browser;
  readonly tab: WatchedPage;
  /** The tab's page. */
  readonly page: Page;
}

export interface ConsoleSessionOptions<Q> {
  /** Runs once the Quarry is up, before the browser opens (e.g. knowledge bases set up through the API). */
  prepare?: (quarry: Q) => Promise<void>;
  /** The beforeAll's timeout, when `start` and `prepare` need more than the configured one. */
  timeout?: number;
}

/**
 * Registers a console suite's hooks, to be called in its describe(): before the tests, build the
 * console, start the Quarry (`start`, then `prepare`), launch Chromium and open one watched tab;
 * after them, close the browser and stop the Quarry (whatever of them got started).
 */
export function consoleInChromium<Q extends ConsoleServer>(executablePath: string, start: () => Promise<Q>, options: ConsoleSessionOptions<Q> = {}): ConsoleSession<Q> {
  let quarry: Q | undefined;
  let browser: Browser | undefined;
  let tab: WatchedPage | undefined;

  beforeAll(async () => {
    ensureConsoleBuilt();
    quarry = await start();
    await options.prepare?.(quarry);
    browser = await launchChromium(executablePath);
    tab = await watchedPage(browser);
  }, options.timeout);

  afterAll(async () => {
    await browser?.close();
    await quarry?.stop();
  });

  // Read at collection time (outside a test) these are not there yet: say so rather than hand out undefined.
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the console session's ${what} is not started: read it inside a test`);
    return value;
  };
  return {
    get quarry() {
      return started(quarry, "Quarry");
    },
    get browser() {
      return started(browser, "browser");
    },
    get tab() {
      return started(tab, "tab");
    },
    get page() {
      return started(tab, "tab").page;
    },
  };
}
