import { EventEmitter } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { restartAfterFatalCrashes } from "./kafka-crash-recovery.ts";

// kafkajs's consumer reports crashes and joins through events; this stands in for that surface only
// (a broker cannot be made to crash a consumer non-retriably on demand; the distributed
// Kafka-restart suite runs the real case).
class ConsumerEvents {
  readonly events = { CRASH: "consumer.crash", GROUP_JOIN: "consumer.group_join" } as const;
  private readonly emitter = new EventEmitter();
  on(event: string, listener: (event: { payload: { error: Error; groupId: string; restart: boolean } }) => void): () => void {
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }
  crash(restart: boolean) {
    this.emitter.emit(this.events.CRASH, { payload: { error: new Error("Failed to find group coordinator"), groupId: "g", restart } });
  }
  join() {
    this.emitter.emit(this.events.GROUP_JOIN, {});
  }
}

describe("restartAfterFatalCrashes", () => {
  let consumer: ConsumerEvents;
  let run: ReturnType<typeof vi.fn<() => Promise<void>>>;
  let warnings: string[];
  let closing: boolean;
  let stop: () => void;

  beforeEach(() => {
    vi.useFakeTimers();
    consumer = new ConsumerEvents();
    run = vi.fn(async () => {});
    warnings = [];
    closing = false;
    stop = restartAfterFatalCrashes(consumer, run, {
      group: "quarry.index",
      logger: { warn: (_fields, message) => warnings.push(message) },
      closing: () => closing,
      firstDelayMs: 1_000,
      maxDelayMs: 4_000,
    });
  });
  afterEach(() => {
    stop();
    vi.useRealTimers();
  });

  it("restarts a consumer kafkajs gave up on, after the delay, and says so", () => {
    consumer.crash(false);
    expect(warnings).toEqual(["the Kafka consumer stopped on an error kafkajs does not restart from; restarting it"]);
    vi.advanceTimersByTime(999);
    expect(run).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("leaves a crash kafkajs restarts itself to kafkajs", () => {
    consumer.crash(true);
    vi.advanceTimersByTime(60_000);
    expect(run).not.toHaveBeenCalled();
    expect(warnings).toEqual([]);
  });

  it("backs off while restarts keep crashing, and starts over once the consumer has joined", () => {
    const restartsAfter = (ms: number) => {
      const before = run.mock.calls.length;
      consumer.crash(false);
      vi.advanceTimersByTime(ms - 1);
      const early = run.mock.calls.length - before;
      vi.advanceTimersByTime(1);
      return { early, made: run.mock.calls.length - before };
    };
    expect(restartsAfter(1_000)).toEqual({ early: 0, made: 1 });
    expect(restartsAfter(2_000)).toEqual({ early: 0, made: 1 });
    expect(restartsAfter(4_000)).toEqual({ early: 0, made: 1 });
    expect(restartsAfter(4_000)).toEqual({ early: 0, made: 1 });
    consumer.join();
    expect(restartsAfter(1_000)).toEqual({ early: 0, made: 1 });
  });

  it("makes one restart for crashes reported before it is made", () => {
    consumer.crash(false);
    consumer.crash(false);
    vi.advanceTimersByTime(10_000);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("makes no restart once the subscription is closing or has stopped watching", () => {
    consumer.crash(false);
    closing = true;
    vi.advanceTimersByTime(10_000);
    expect(run).not.toHaveBeenCalled();
    closing = false;
    stop();
    consumer.crash(false);
    vi.advanceTimersByTime(10_000);
    expect(run).not.toHaveBeenCalled();
  });

  it("reports a restart that fails to start and restarts again on the next crash", async () => {
    run.mockRejectedValueOnce(new Error("connect ECONNREFUSED"));
    consumer.crash(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(warnings).toContain("restarting the Kafka consumer failed");
    consumer.crash(false);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(run).toHaveBeenCalledTimes(2);
  });
});
