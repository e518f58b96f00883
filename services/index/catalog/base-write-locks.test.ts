import { describe, expect, it } from "vitest";
import { BaseWriteLocks } from "./base-write-locks.ts";

/** A held section that records when it ran and ends when told to. */
function section(log: string[], name: string) {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return {
    run: async () => {
      log.push(`${name} start`);
      await ended;
      log.push(`${name} end`);
      return name;
    },
    end,
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("BaseWriteLocks", () => {
  it("lets shared holders of one base run together, and other bases run beside them", async () => {
    const locks = new BaseWriteLocks();
    const log: string[] = [];
    const [a, b, other] = [section(log, "a"), section(log, "b"), section(log, "other")];
    const held = [locks.shared("kb", a.run), locks.shared("kb", b.run), locks.exclusive("kb2", other.run)];
    await tick();
    expect(log).toEqual(["a start", "b start", "other start"]);
    a.end();
    b.end();
    other.end();
    expect(await Promise.all(held)).toEqual(["a", "b", "other"]);
  });

  it("gives an exclusive holder the base alone, in arrival order: after the shared holders before it, before those after it", async () => {
    const locks = new BaseWriteLocks();
    const log: string[] = [];
    const [before, swap, after] = [section(log, "before"), section(log, "swap"), section(log, "after")];
    const held = [locks.shared("kb", before.run), locks.exclusive("kb", swap.run), locks.shared("kb", after.run)];
    await tick();
    expect(log).toEqual(["before start"]);
    before.end();
    await tick();
    expect(log).toEqual(["before start", "before end", "swap start"]);
    swap.end();
    await tick();
    expect(log.at(-1)).toBe("after start");
    after.end();
    await Promise.all(held);
  });

  it("releases the lock when the holder fails", async () => {
    const locks = new BaseWriteLocks();
    await expect(locks.exclusive("kb", async () => Promise.reject(new Error("engine down")))).rejects.toThrow("engine down");
    await expect(locks.shared("kb", async () => "written")).resolves.toBe("written");
  });
});
