import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SourceSyncSchema, SourceSyncState } from "../../gen/quarry/common/v1/source_pb.ts";
import { LiveSync } from "./live-sync.ts";

const running = (listed: number) => create(SourceSyncSchema, { state: SourceSyncState.RUNNING, listed });

describe("LiveSync", () => {
  it("gives a watcher the current state, each newer one it is waiting for, and ends with the final", async () => {
    const live = new LiveSync(running(0));
    const seen: number[] = [];
    const watching = (async () => {
      for await (const sync of live.watch()) {
        seen.push(sync.listed);
        // Each state is answered before the next is made: the watcher is waiting when it comes.
        if (sync.state === SourceSyncState.RUNNING) queueMicrotask(() => (sync.listed < 2 ? live.update(running(sync.listed + 1)) : live.end(create(SourceSyncSchema, { state: SourceSyncState.DONE, listed: 3 }))));
      }
    })();
    await watching;
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it("lets a slow watcher skip states it missed but never the final one", async () => {
    const live = new LiveSync(running(0));
    const iterator = live.watch()[Symbol.asyncIterator]();
    expect((await iterator.next()).value.listed).toBe(0);
    live.update(running(1));
    live.update(running(2));
    live.end(create(SourceSyncSchema, { state: SourceSyncState.DONE, listed: 5 }));
    live.update(running(9));
    expect((await iterator.next()).value).toMatchObject({ state: SourceSyncState.DONE, listed: 5 });
    expect((await iterator.next()).done).toBe(true);
    // A watcher that comes after the end gets the final state alone.
    const late: number[] = [];
    for await (const sync of live.watch()) late.push(sync.listed);
    expect(late).toEqual([5]);
  });

  it("stops a watcher when its signal aborts", async () => {
    const live = new LiveSync(running(0));
    const controller = new AbortController();
    const seen: number[] = [];
    const watching = (async () => {
      for await (const sync of live.watch(controller.signal)) {
        seen.push(sync.listed);
        queueMicrotask(() => controller.abort());
      }
    })();
    await watching;
    expect(seen).toEqual([0]);
  });
});
