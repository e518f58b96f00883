import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";

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
