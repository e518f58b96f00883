import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { startProgress } from "./ingest-progress.ts";

/** Collects what is written; with isTTY, shaped like a terminal as far as cli-progress asks. */
function sink(tty: boolean) {
  let text = "";
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  if (tty) Object.assign(stream, { isTTY: true, columns: 120, cursorTo: () => true, clearLine: () => true, moveCursor: () => true, clearScreenDown: () => true });
  return { stream, text: () => text };
}

describe("ingest progress", () => {
  it("on a terminal, the bar counts documents (2/7), not percent points (200/700)", async () => {
    const out = sink(true);
    const progress = startProgress(out.stream, 7);
    // cli-progress redraws at most ten times a second.
    await new Promise((r) => setTimeout(r, 150));
    progress.update({ done: 2, total: 7, percentSum: 260, file: "b.md" });
    await new Promise((r) => setTimeout(r, 150));
    progress.stop({ done: 7, total: 7, percentSum: 700, file: "g.md" });
    expect(out.text()).toContain("2/7 documents done");
    expect(out.text()).toContain("7/7 documents done");
    expect(out.text()).not.toMatch(/\b\d+\/700\b/);
  });

  it("elsewhere, plain lines: one at the start, at most one per interval while anything moves, one at the end", async () => {
    const out = sink(false);
    const progress = startProgress(out.stream, 3, { intervalMs: 50 });
    progress.update({ done: 0, total: 3, percentSum: 30, file: "a" }); // within the interval: held back
    await new Promise((r) => setTimeout(r, 60));
    progress.update({ done: 0, total: 3, percentSum: 120, file: "a" }); // no document done yet, but it moved
    await new Promise((r) => setTimeout(r, 60));
    progress.update({ done: 0, total: 3, percentSum: 120, file: "a" }); // nothing moved: no line
    progress.update({ done: 1, total: 3, percentSum: 150, file: "a" }); // moved, and an interval since the last line
    progress.update({ done: 2, total: 3, percentSum: 250, file: "b" }); // within the interval: held back
    progress.stop({ done: 3, total: 3, percentSum: 300, file: "c" });
    expect(out.text()).toBe(
      "ingesting: 0/3 documents done, 0%\ningesting: 0/3 documents done, 40%\ningesting: 1/3 documents done, 50%\ningesting: 3/3 documents done, 100%\n",
    );
  });

  it("says document in the singular for one", () => {
    const out = sink(false);
    startProgress(out.stream, 1).stop({ done: 1, total: 1, percentSum: 100, file: "" });
    expect(out.text()).toBe("ingesting: 0/1 document done, 0%\ningesting: 1/1 document done, 100%\n");
  });
});
