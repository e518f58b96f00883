// A live write of documents, on any index replica, while their base may be changing its embedding
// model on another. The catalog carries the change's phase (running, then switching) and the marks
// of documents written meanwhile; the replica running the change re-embeds the marked documents
// from their live chunks after it enters the switching phase and before it swaps (model-change.ts).
//
// The write protocol makes every write land in the new model's space or be redone there:
//   1. wait while the base is switching;
//   2. write;
//   3. read the phase again. A running change not yet switching, the one running before the write
//      if any: mark the documents, and if the phase is still the same afterwards the mark was there before the change listed the marks
//      (it lists them only once switching), so it re-embeds what this write left. No change before
//      nor after, the same one: nothing to do. Anything else (a switch, a change begun and ended
//      around the write, switching already): the write may have gone to the old space, so go to 1
//      and write again; a write is a replacement, so writing twice is the same as once.
import type { KnowledgeBase } from "../../../lib/domain.ts";
import { NotFoundError } from "../../../lib/errors.ts";
import type { Catalog } from "./catalog.ts";

export interface ModelChangeFenceDeps {
  catalog: Pick<Catalog, "getKnowledgeBase" | "markModelChangeDocuments">;
  /** How often a write waiting for a switch reads the catalog again (default 100 ms). */
  pollMs?: number;
}

interface Phase {
  /** Which change (its start time), "" for none. */
  change: string;
  running: boolean;
  switching: boolean;
}

export class ModelChangeFence {
  constructor(private readonly deps: ModelChangeFenceDeps) {}

  /** Runs `write` (a replacement: running it again changes nothing) for the documents, as above. */
  async write<T>(knowledgeBaseId: string, documentIds: string[], write: () => Promise<T>): Promise<T> {
    for (;;) {
      const before = await this.pastSwitch(knowledgeBaseId);
      let result: T;
      try {
        result = await write();
      } catch (error) {
        // A write into a space a switch has just replaced (the old model's dimension) fails; the
        // same write after the switch is re-embedded with the base's model.
        if (same(before, await this.phase(knowledgeBaseId))) throw error;
        continue;
      }
      const after = await this.phase(knowledgeBaseId);
      if (!before.running && !after.running && after.change === before.change) return result;
      // Marking needs the write to have gone to the space this change re-embeds from: the live one
      // since it began (not one that another change swapped out meanwhile).
      if (after.running && !after.switching && (!before.running || before.change === after.change)) {
        await this.deps.catalog.markModelChangeDocuments(knowledgeBaseId, documentIds);
        if (same(after, await this.phase(knowledgeBaseId))) return result;
      }
    }
  }

  private async pastSwitch(knowledgeBaseId: string): Promise<Phase> {
    for (;;) {
      const phase = await this.phase(knowledgeBaseId);
      if (!phase.switching) return phase;
      await new Promise((resolve) => setTimeout(resolve, this.deps.pollMs ?? 100));
    }
  }

  private async phase(knowledgeBaseId: string): Promise<Phase> {
    let kb: KnowledgeBase;
    try {
      kb = await this.deps.catalog.getKnowledgeBase(knowledgeBaseId, { counts: false });
    } catch (error) {
      // A base deleted meanwhile changes no model; the write itself says what it makes of that.
      if (error instanceof NotFoundError) return { change: "", running: false, switching: false };
      throw error;
    }
    const change = kb.modelChange;
    const running = change?.state === "running";
    return { change: change ? String(change.startedAt.getTime()) : "", running, switching: running && change.switching === true };
  }
}

function same(a: Phase, b: Phase): boolean {
  return a.change === b.change && a.running === b.running && a.switching === b.switching;
}
