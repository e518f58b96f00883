// The stream's phases from the catalog's record of a change: what a watcher sees as the record moves
// (the catalog itself is exercised end to end in test/e2e/model-change.test.ts).
import { create } from "@bufbuild/protobuf";
import { describe as suite, expect, it } from "vitest";
import { KnowledgeBaseSchema, ModelChangeState, type KnowledgeBase } from "../gen/quarry/common/v1/common_pb.ts";
import { ModelChangePhase } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import { watchModelChange } from "./watch-model-change.ts";

function base(state: ModelChangeState | undefined, done = 0, total = 3, error = ""): KnowledgeBase {
  const switched = state === ModelChangeState.DONE;
  return create(KnowledgeBaseSchema, {
    id: "kb_1",
    name: "notes",
    embeddingModel: switched ? "bge-small-zh-v1.5" : "all-MiniLM-L6-v2-int8",
    embeddingDimension: switched ? 512 : 384,
    ...(state === undefined
      ? {}
      : { modelChange: { targetModel: "bge-small-zh-v1.5", targetDimension: 512, previousModel: "all-MiniLM-L6-v2-int8", state, documentsDone: done, documentsTotal: total, error } }),
  });
}

async function watch(states: KnowledgeBase[]) {
  let i = 0;
  const seen = [];
  for await (const update of watchModelChange({ read: async () => states[Math.min(i++, states.length - 1)], pollMs: 1 })) seen.push(update);
  return { seen, reads: i };
}

suite("watchModelChange", () => {
  it("reports each new count once, then switching, then done, and ends", async () => {
    const R = ModelChangeState.RUNNING;
    const { seen } = await watch([base(R, 0), base(R, 0), base(R, 1), base(R, 3), base(R, 3), base(ModelChangeState.DONE, 3)]);
    expect(seen.map((u) => [u.phase, u.message])).toEqual([
      [ModelChangePhase.REEMBEDDING, "0/3 documents re-embedded with bge-small-zh-v1.5"],
      [ModelChangePhase.REEMBEDDING, "1/3 documents re-embedded with bge-small-zh-v1.5"],
      [ModelChangePhase.SWITCHING, "all 3 documents re-embedded with bge-small-zh-v1.5; switching"],
      [ModelChangePhase.DONE, "switched from all-MiniLM-L6-v2-int8 to bge-small-zh-v1.5 (512 dims)"],
    ]);
    expect(seen.at(-1)!.change).toMatchObject({ state: ModelChangeState.DONE, documentsDone: 3 });
  });

  it("ends with the reason when the change fails", async () => {
    const { seen } = await watch([base(ModelChangeState.RUNNING, 1), base(ModelChangeState.FAILED, 1, 3, "bge-small-zh-v1.5 is not installed")]);
    expect(seen.at(-1)).toMatchObject({ phase: ModelChangePhase.FAILED, message: "the change to bge-small-zh-v1.5 failed, all-MiniLM-L6-v2-int8 stays: bge-small-zh-v1.5 is not installed" });
  });

  it("yields a base's last state once when no change runs", async () => {
    expect((await watch([base(undefined)])).seen.map((u) => u.phase)).toEqual([ModelChangePhase.NONE]);
    const done = await watch([base(ModelChangeState.DONE, 3)]);
    expect(done.seen.map((u) => u.phase)).toEqual([ModelChangePhase.DONE]);
    expect(done.reads).toBe(1);
  });

  it("stops when its signal aborts (the server shutting down) with UNAVAILABLE, not a clean end that reads as done", async () => {
    const controller = new AbortController();
    const seen: unknown[] = [];
    const run = async () => {
      for await (const update of watchModelChange({ read: async () => base(ModelChangeState.RUNNING, seen.length), pollMs: 1, signal: controller.signal })) {
        seen.push(update);
        if (seen.length === 2) controller.abort();
      }
    };
    await expect(run()).rejects.toMatchObject({ name: "UnavailableError", message: expect.stringMatching(/shutting down .* watch again/) });
    expect(seen).toHaveLength(2);
  });
});
