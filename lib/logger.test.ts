import { spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createLogger, logFormat, prettyStream } from "./logger.ts";

function capture() {
  const lines: string[] = [];
  return { lines, stream: { write: (line: string) => void lines.push(line) } };
}

describe("createLogger", () => {
  it("writes one service key per line when a service logs through a child of the process logger", () => {
    const { lines, stream } = capture();
    const root = createLogger("parser", "info", stream);
    root.child({ service: "parser" }).info({ port: 8081 }, "listening");
    root.info("Quarry is up");
    expect(lines).toHaveLength(2);
    const raw = lines[0];
    // JSON.parse would hide a duplicate; count the key in the text as a reader without dedup sees it.
    expect(raw.match(/"service":/g), raw).toHaveLength(1);
    expect(raw.match(/"name":/g), raw).toHaveLength(1);
    const first = JSON.parse(raw);
    expect(first).toMatchObject({ name: "parser", service: "parser", port: 8081, msg: "listening" });
    expect(JSON.parse(lines[1])).toMatchObject({ name: "parser", msg: "Quarry is up" });
  });
});

describe("a process whose stdout reader has gone", () => {
  // `quarry serve | tee log` and Ctrl-C: tee dies at once, Quarry drains, logs its last lines and
  // exits. pino's exit hook then writes what is still buffered synchronously, and with sonic-boom 4
  // a write refused with EPIPE was retried every 100 ms forever: the process never ended
  // (package.json pins pino's sonic-boom to 5, which gives up on errors it cannot wait out).
  it("still exits when its last lines cannot be written", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./testing/log-then-exit.child.ts", import.meta.url))], {
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, QUARRY_LOG_FORMAT: "json" },
    });
    child.stdout.destroy();
    const ended = await new Promise<number | string>((done) => {
      const timer = setTimeout(() => done("still running after 30 s"), 30_000);
      child.once("exit", (code, signal) => (clearTimeout(timer), done(code ?? String(signal))));
    });
    if (ended !== 0) child.kill("SIGKILL");
    expect(ended).toBe(0);
  }, 40_000);
});

describe("log format", () => {
  it("is readable in a terminal and JSON elsewhere, unless QUARRY_LOG_FORMAT says", () => {
    expect(logFormat({}, true)).toBe("pretty");
    expect(logFormat({}, false)).toBe("json");
    expect(logFormat({ QUARRY_LOG_FORMAT: "json" }, true)).toBe("json");
    expect(logFormat({ QUARRY_LOG_FORMAT: "Pretty" }, false)).toBe("pretty");
  });

  it("writes one plain line per entry: time, level, service, message, then the fields", () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on("data", (chunk: Buffer) => chunks.push(chunk.toString("utf8")));
    const root = createLogger("quarry", "info", prettyStream(out, false));
    root.child({ service: "gateway" }).warn({ port: 8080 }, "listening");
    const line = chunks.join("");
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\] WARN: gateway: listening\n\s+port: 8080\n$/);
    expect(line).not.toContain("{");
  });
});
