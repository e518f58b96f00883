import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FailedPreconditionError } from "../errors.ts";
import { describeEventBusContract } from "./testing/event-bus.contract.ts";
import { assertOwned, type BusMessage } from "./event-bus.ts";
import { PrefixedEventBus } from "./prefixed-event-bus.ts";
import { SqliteEventBus } from "./sqlite-event-bus.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function tempDatabaseFile(): { file: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "quarry-bus-"));
  return { file: path.join(dir, "quarry.db"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describeEventBusContract("SQLite", async () => {
  const { file, remove } = tempDatabaseFile();
  const buses: SqliteEventBus[] = [new SqliteEventBus(file)];
  return {
    bus: buses[0],
    reopen: async () => {
      const bus = new SqliteEventBus(file);
      buses.push(bus);
      return bus;
    },
    cleanup: async () => {
      for (const bus of buses) await bus.close();
      remove();
    },
  };
});

describe("SqliteEventBus", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function openBus(file: string, options?: ConstructorParameters<typeof SqliteEventBus>[1]): SqliteEventBus {
    const bus = new SqliteEventBus(file, options);
    cleanups.push(() => bus.close());
    return bus;
  }

  function tempFile(): string {
    const { file, remove } = tempDatabaseFile();
    cleanups.push(remove);
    return file;
  }

  it("redelivers the in-flight message after a consumer process is killed, and nothing committed before it", async () => {
    const file = tempFile();
    const bus = openBus(file);
    const values = Array.from({ length: 10 }, (_, i) => `m${i}`);
    await bus.publish("crash", values.map((value) => ({ key: "doc", value: encoder.encode(value) })));

    const child = spawn(
      process.execPath,
      ["--import", "tsx", fileURLToPath(new URL("./testing/sqlite-event-bus.crash-child.ts", import.meta.url)), file, "crash", "stage", "m4"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => child.on("exit", resolve));
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    await vi.waitFor(() => expect(output).toContain("hanging m4"), { timeout: 30_000, interval: 20 });
    child.kill("SIGKILL");
    await exited;
    expect(output.match(/handled \S+/g)).toEqual(["handled m0", "handled m1", "handled m2", "handled m3"]);

    // The killed process never released its lease; a new consumer takes over once it expires.
    const seen: string[] = [];
    await bus.subscribe({
      group: "stage",
      topics: ["crash"],
      handler: async (message) => {
        seen.push(decoder.decode(message.value));
      },
    });
    await vi.waitFor(() => expect(seen).toEqual(values.slice(4)), { timeout: 10_000, interval: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toEqual(values.slice(4));
  });

  /** Holds this thread, as a CPU-bound step on it would. */
  const busyFor = (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until);
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("keeps a lease its holder renewed late: a thread busy past the lease does not get its message delivered again", async () => {
    const bus = openBus(tempFile(), { leaseMs: 300, pollIntervalMs: 10 });
    const deliveries: string[] = [];
    const owned: boolean[] = [];
    await bus.subscribe({
      group: "stage",
      topics: ["work"],
      handler: async (m) => {
        deliveries.push(decoder.decode(m.value));
        if (deliveries.length === 1) busyFor(700);
        owned.push(m.owned!());
      },
    });
    await bus.publish("work", [{ key: "doc", value: encoder.encode("slow") }, { key: "doc", value: encoder.encode("next") }]);
    await vi.waitFor(() => expect(deliveries).toEqual(["slow", "next"]), { timeout: 5_000, interval: 20 });
    await sleep(300);
    expect(deliveries).toEqual(["slow", "next"]);
    expect(owned).toEqual([true, true]);
  });

  it("tells a handler whose lease another member took that the message is not its own; its output is published once, by the next holder", async () => {
    const file = tempFile();
    const bus = openBus(file, { leaseMs: 300, pollIntervalMs: 10 });
    // Another process on the file, taking the lease over as an expired lease is taken.
    const other = new Database(file);
    cleanups.push(() => void other.close());
    let takenOver!: () => void;
    const takeover = new Promise<void>((resolve) => (takenOver = resolve));
    const told: string[] = [];
    let deliveries = 0;
    await bus.subscribe({
      group: "stage",
      topics: ["in"],
      handler: async (m) => {
        if (++deliveries === 1) await takeover;
        try {
          assertOwned(m);
        } catch (error) {
          told.push((error as Error).name);
          throw error;
        }
        await bus.publish("out", [{ key: m.key, value: encoder.encode(`did ${decoder.decode(m.value)}`) }]);
      },
    });
    await bus.publish("in", [{ key: "doc", value: encoder.encode("job") }]);
    await vi.waitFor(() => expect(deliveries).toBe(1), { timeout: 5_000, interval: 10 });
    other.prepare("UPDATE bus_leases SET owner = 'other member', expires_at = ? WHERE group_id = 'stage'").run(Date.now() + 60_000);
    takenOver();
    await vi.waitFor(() => expect(told).toEqual(["LeaseLostError"]), { timeout: 5_000, interval: 10 });
    // The other member goes away without finishing; this one takes the lease back and handles the message again.
    other.prepare("DELETE FROM bus_leases WHERE owner = 'other member'").run();
    const outputs = () => (bus.db.prepare("SELECT value FROM bus_messages WHERE topic = 'out'").all() as { value: Buffer }[]).map((r) => decoder.decode(r.value));
    await vi.waitFor(() => expect(outputs()).toEqual(["did job"]), { timeout: 5_000, interval: 20 });
    expect(deliveries).toBe(2);
  });

  it("lets two bus instances on one file share a group without double delivery", async () => {
    const file = tempFile();
    const first = openBus(file);
    const second = openBus(file);
    const handledBy = new Map<string, string[]>();
    const record = (who: string) => async (message: BusMessage) => {
      const value = decoder.decode(message.value);
      handledBy.set(value, [...(handledBy.get(value) ?? []), who]);
    };
    await first.subscribe({ group: "stage", topics: ["shared"], handler: record("first") });
    await second.subscribe({ group: "stage", topics: ["shared"], handler: record("second") });
    const values = Array.from({ length: 60 }, (_, i) => `m${i}`);
    for (let i = 0; i < values.length; i += 6) {
      // Publish from both instances, as two processes would.
      await (i % 12 === 0 ? first : second).publish(
        "shared",
        values.slice(i, i + 6).map((value) => ({ key: `doc-${i % 5}`, value: encoder.encode(value) })),
      );
    }
    await vi.waitFor(() => expect(handledBy.size).toBe(60), { timeout: 10_000, interval: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const value of values) expect(handledBy.get(value)).toHaveLength(1);
  });

  it("does not query an idle subscription's topics on every poll interval", async () => {
    const reads: string[] = [];
    const db = new Database(tempFile(), { verbose: (sql) => void (typeof sql === "string" && sql.includes("FROM bus_messages") && reads.push(sql)) });
    cleanups.push(() => void db.close());
    const bus = new SqliteEventBus(db, { pollIntervalMs: 20 });
    cleanups.push(() => bus.close());
    await bus.subscribe({ group: "idle", topics: ["quiet"], handler: async () => {} });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = reads.length;
    await new Promise((resolve) => setTimeout(resolve, 700));
    // Polling its topic every 20 ms would be about 35 reads; nothing woke it, so at most the
    // once-a-second look is made.
    expect(reads.length - before).toBeLessThanOrEqual(1);
  });

  it("delivers a message another connection to the file committed without waiting for an idle poll", async () => {
    const file = tempFile();
    const reader = openBus(file, { pollIntervalMs: 20 });
    const writer = openBus(file);
    const seen: string[] = [];
    await reader.subscribe({ group: "g", topics: ["elsewhere"], handler: async (m) => void seen.push(decoder.decode(m.value)) });
    // Long enough for the subscription's first read to find nothing and its idle wait to begin.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const published = performance.now();
    // The writer's own subscribers would be woken directly; the reader only learns of it from the file.
    await writer.publish("elsewhere", [{ key: "k", value: encoder.encode("from another process") }]);
    await vi.waitFor(() => expect(seen).toEqual(["from another process"]), { timeout: 5_000, interval: 5 });
    // The data_version check runs every 20 ms here; the idle subscription's own look, once a second.
    expect(performance.now() - published).toBeLessThan(600);
  });

  it("works on a Database the caller opened, and leaves it open on close", async () => {
    const db = new Database(tempFile());
    cleanups.push(() => void db.close());
    const bus = new SqliteEventBus(db);
    await bus.publish("t", [{ key: "k", value: encoder.encode("v") }]);
    await bus.close();
    expect(db.open).toBe(true);
    expect(db.prepare("SELECT COUNT(*) AS n FROM bus_messages").get()).toEqual({ n: 1 });
    await expect(bus.publish("t", [{ key: "k", value: encoder.encode("w") }])).rejects.toBeInstanceOf(FailedPreconditionError);
  });

  it("prunes messages older than the retention setting", async () => {
    const file = tempFile();
    const bus = openBus(file, { retentionMs: 50 });
    await bus.publish("old", [{ key: "k", value: encoder.encode("stale") }]);
    await new Promise((resolve) => setTimeout(resolve, 120));
    await bus.publish("old", [{ key: "k", value: encoder.encode("fresh") }]);
    const seen: string[] = [];
    await bus.subscribe({ group: "late", topics: ["old"], handler: async (m) => void seen.push(decoder.decode(m.value)) });
    await vi.waitFor(() => expect(seen).toEqual(["fresh"]), { timeout: 5_000, interval: 20 });
  });

  it("keeps its tables apart from other components in the same file", async () => {
    const file = tempFile();
    openBus(file);
    const db = new Database(file, { readonly: true });
    cleanups.push(() => void db.close());
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'sqlite_sequence'").all() as { name: string }[];
    expect(tables.map((t) => t.name).every((name) => name.startsWith("bus_"))).toBe(true);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
  });
});

// The prefix wrapper must keep every promise of the bus, so it runs the same contract.
describeEventBusContract("SQLite behind a topic prefix", async () => {
  const { file, remove } = tempDatabaseFile();
  const buses: SqliteEventBus[] = [new SqliteEventBus(file)];
  return {
    bus: new PrefixedEventBus(buses[0], "tenant-a."),
    reopen: async () => {
      const bus = new SqliteEventBus(file);
      buses.push(bus);
      return new PrefixedEventBus(bus, "tenant-a.");
    },
    cleanup: async () => {
      for (const bus of buses) await bus.close().catch(() => undefined);
      remove();
    },
  };
});

describe("peek", () => {
  it("reads the newest messages of a topic, oldest first, without moving any group", async () => {
    const inner = new SqliteEventBus(":memory:");
    const bus = new PrefixedEventBus(inner, "t.");
    try {
      const payloads = ["one", "two", "three"].map((text) => ({ key: text, value: encoder.encode(text), headers: { "x-original-topic": "t.stage" } }));
      await bus.publish("stage.dlq", payloads);
      const newest = await bus.peek("stage.dlq", 2);
      expect(newest.map((m) => decoder.decode(m.value))).toEqual(["two", "three"]);
      // The prefix stays inside: topics and the dead-letter headers come back plain.
      expect(newest.map((m) => [m.topic, m.headers["x-original-topic"]])).toEqual([["stage.dlq", "stage"], ["stage.dlq", "stage"]]);
      expect(await bus.pending("anyone", "stage.dlq")).toEqual([{ partition: "0", pending: 3 }]);
      expect(await bus.peek("nothing-here", 5)).toEqual([]);
    } finally {
      await inner.close();
    }
  });
});
