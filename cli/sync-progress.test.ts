import { create } from "@bufbuild/protobuf";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { SourceSyncSchema, SourceSyncState } from "../gen/quarry/common/v1/source_pb.ts";
import { startSyncProgress } from "./sync-progress.ts";

function output(tty: boolean) {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk) => (text += String(chunk)));
  if (tty) Object.assign(stream, { isTTY: true });
  return { stream, text: () => text };
}

const at = (listed: number, submitted: number) => create(SourceSyncSchema, { state: SourceSyncState.RUNNING, listed, submitted });

describe("startSyncProgress", () => {
  it("redraws one line in place on a terminal and ends it", () => {
    const out = output(true);
    const progress = startSyncProgress(out.stream, "docs");
    progress.update(at(3, 1));
    progress.update(at(3, 1));
    progress.update(at(5, 2));
    progress.stop();
    expect(out.text()).toBe(
      "\r\x1b[2Ksyncing docs: listed 3, submitted 1, unchanged 0, removed 0, moved 0, failed 0" +
        "\r\x1b[2Ksyncing docs: listed 5, submitted 2, unchanged 0, removed 0, moved 0, failed 0\n",
    );
  });

  it("writes plain lines elsewhere, at most one per interval", () => {
    const out = output(false);
    const progress = startSyncProgress(out.stream, "docs", { intervalMs: 60_000 });
    progress.update(at(1, 0));
    progress.update(at(2, 0));
    progress.stop();
    expect(out.text()).toBe("syncing docs: listed 1, submitted 0, unchanged 0, removed 0, moved 0, failed 0\n");
  });
});
