// The supervisor with real child processes: small Node scripts that crash, run, or refuse to stop.
import { describe, expect, it } from "vitest";
import { Supervisor, type ChildSpec } from "./supervisor.ts";

const node = (name: string, script: string): ChildSpec => ({ name, command: process.execPath, args: ["-e", script], env: { PATH: process.env.PATH } });
// Each child takes SIGTERM before it says "up": the test signals it as soon as it reads that line.
const RUNS = `process.on("SIGTERM", () => { console.log("draining"); process.exit(0); }); console.log("up " + process.pid); setInterval(() => {}, 1000);`;
const STUBBORN = `process.on("SIGTERM", () => console.log("ignoring SIGTERM")); console.log("up"); setInterval(() => {}, 1000);`;

function collect() {
  const lines: string[] = [];
  const seen = (pattern: RegExp, count = 1, timeoutMs = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const poll = () => {
        if (lines.filter((l) => pattern.test(l)).length >= count) return resolve();
        if (Date.now() > deadline) return reject(new Error(`no ${count}× ${pattern} in:\n${lines.join("\n")}`));
        setTimeout(poll, 20);
      };
      poll();
    });
  return { lines, seen, out: (l: string) => lines.push(l), err: (l: string) => lines.push(`ERR ${l}`) };
}

describe("Supervisor", () => {
  it("prefixes each child's lines, restarts a crashing child with growing delays, and stops the rest cleanly", async () => {
    const log = collect();
    const supervisor = new Supervisor([node("crasher", `console.error("boom"); process.exit(3)`), node("steady", RUNS)], {
      out: log.out,
      err: log.err,
      restartBackoff: { initialMs: 100, maxMs: 400 },
    });
    supervisor.start();
    await log.seen(/^quarry {2}\| crasher exited \(code 3\); restarting in 0\.4 s$/);
    expect(log.lines).toContain("ERR crasher | boom");
    expect(log.lines.filter((l) => /crasher exited \(code 3\); restarting in/.test(l)).slice(0, 3)).toEqual([
      "quarry  | crasher exited (code 3); restarting in 0.1 s",
      "quarry  | crasher exited (code 3); restarting in 0.2 s",
      "quarry  | crasher exited (code 3); restarting in 0.4 s",
    ]);
    expect(log.lines.some((l) => /^steady {2}\| up \d+$/.test(l))).toBe(true);

    await supervisor.stop();
    expect(log.lines).toContain("steady  | draining");
    expect(log.lines).toContain("quarry  | steady stopped (code 0)");
    expect(supervisor.pid("steady")).toBeUndefined();
    const after = log.lines.length;
    await new Promise((r) => setTimeout(r, 600));
    expect(log.lines.slice(after).filter((l) => /crasher started/.test(l)), "a child was restarted after stop").toEqual([]);
  });

  it("brings back a child killed with SIGKILL as a new process", async () => {
    const log = collect();
    const supervisor = new Supervisor([node("victim", RUNS)], { out: log.out, err: log.err, restartBackoff: { initialMs: 50, maxMs: 50 } });
    supervisor.start();
    await log.seen(/victim +\| up/);
    const first = supervisor.pid("victim")!;
    process.kill(first, "SIGKILL");
    await log.seen(/victim exited \(signal SIGKILL\); restarting in 0\.05 s/);
    await log.seen(/victim +\| up/, 2);
    expect(supervisor.pid("victim")).not.toBe(first);
    await supervisor.stop();
  });

  it("kills a child that does not drain within the grace period", async () => {
    const log = collect();
    // A grace long enough for a loaded machine to deliver SIGTERM and the child's answer to it.
    const supervisor = new Supervisor([node("stubborn", STUBBORN)], { out: log.out, err: log.err, stopGraceMs: 3000 });
    supervisor.start();
    await log.seen(/stubborn \| up/);
    await supervisor.stop();
    expect(log.lines, log.lines.join("\n")).toContain("stubborn | ignoring SIGTERM");
    expect(log.lines).toContain("quarry   | stubborn did not stop within 3 s; killing it");
    expect(log.lines).toContain("quarry   | stubborn stopped (signal SIGKILL)");
  });
});
