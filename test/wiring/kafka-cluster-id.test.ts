// Kafka cluster ids as deploy/local/engines.sh and lib/testing/private-kafka.ts make them: 16 random
// bytes in URL-safe base64, of which one in 64 begins with "-", which kafka-storage reads as an
// option. A cluster given one never formats, so its engines never start. The
// script is sourced (it then only defines its functions) with its random source replaced, so the
// case that comes once in 64 comes every time.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const script = resolve(import.meta.dirname, "../../deploy/local/engines.sh");
const dir = mkdtempSync(join(tmpdir(), "quarry-engines-script-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function bash(body: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync("bash", ["-c", `source "$1"; ${body}`, "bash", script], { encoding: "utf8", timeout: 30_000 });
  return { status: run.status, stdout: run.stdout.trim(), stderr: run.stderr };
}

describe("engines.sh new_kafka_cluster_id", () => {
  it("draws again when an id would begin with '-', as Kafka's own Uuid.randomUuid does", () => {
    const draws = join(dir, "draws");
    // The first draw's first byte is 0xf8: its top six bits are 62, base64 "+", URL-safe "-".
    const run = bash(`
      random_bytes() {
        echo x >>"${draws}"
        if (( $(wc -l <"${draws}") == 1 )); then printf '\\xf8'; head -c 15 /dev/zero; else head -c 16 /dev/zero; fi
      }
      new_kafka_cluster_id`);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("AAAAAAAAAAAAAAAAAAAAAA");
    expect(readFileSync(draws, "utf8").split("\n").filter(Boolean)).toHaveLength(2);
  });

  it("gives 22 URL-safe base64 characters, never a leading '-', from the real random source", () => {
    const run = bash(`for i in $(seq 200); do new_kafka_cluster_id; done`);
    expect(run.status).toBe(0);
    const ids = run.stdout.split("\n");
    expect(ids).toHaveLength(200);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
    expect(new Set(ids).size).toBe(200);
  });

  it("sourced, runs no command", () => {
    const run = bash(`echo sourced`);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("sourced");
  });
});

describe("lib/testing/private-kafka.ts kafkaClusterId", () => {
  it("draws again when an id would begin with '-'", async () => {
    const { kafkaClusterId } = await import("../../lib/testing/private-kafka.ts");
    const draws = [Buffer.from([0xf8, ...new Array(15).fill(0)]), Buffer.alloc(16)];
    let drawn = 0;
    expect(Buffer.from([0xf8]).toString("base64url").startsWith("-")).toBe(true);
    expect(kafkaClusterId(() => draws[drawn++]!)).toBe("AAAAAAAAAAAAAAAAAAAAAA");
    expect(drawn).toBe(2);
  });
});
