import { describe, expect, it } from "vitest";
import { Backoff, sleep } from "./backoff.ts";

describe("Backoff", () => {
  it("doubles from the first delay up to the cap, and starts over after reset", () => {
    const backoff = new Backoff({ initialMs: 250, maxMs: 1500 });
    expect([backoff.next(), backoff.next(), backoff.next(), backoff.next(), backoff.next()]).toEqual([250, 500, 1000, 1500, 1500]);
    backoff.reset();
    expect(backoff.next()).toBe(250);
  });
});

describe("sleep", () => {
  it("ends early, rejecting, when its signal aborts", async () => {
    const abort = new AbortController();
    const started = Date.now();
    const waiting = sleep(60_000, abort.signal);
    setTimeout(() => abort.abort(new Error("stopping")), 20);
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
