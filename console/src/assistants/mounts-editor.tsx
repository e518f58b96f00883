// Which knowledge bases an assistant searches: each mounted base has its own top-k (0: the
// assistant's) and priority (higher ranks first; equal priorities interleave by rank).
import type { KnowledgeBase } from "../../../gen/quarry/common/v1/common_pb.ts";

export interface MountDraft {
  knowledgeBase: string;
  topK: number;
  priority: number;
}

export function MountsEditor({ bases, value, onChange }: { bases: KnowledgeBase[]; value: MountDraft[]; onChange: (mounts: MountDraft[]) => void }) {
  const mountOf = (kb: KnowledgeBase) => value.find((m) => m.knowledgeBase === kb.id || m.knowledgeBase === kb.name);
  const set = (kb: KnowledgeBase, change: Partial<MountDraft> | undefined) => {
    const rest = value.filter((m) => m !== mountOf(kb));
    if (change === undefined) return onChange(rest);
    const current = mountOf(kb) ?? { knowledgeBase: kb.id, topK: 0, priority: 0 };
    // Keep the order bases were mounted in; a newly mounted one goes last.
    onChange(mountOf(kb) ? value.map((m) => (m === current ? { ...m, ...change } : m)) : [...rest, { ...current, ...change }]);
  };
  return (
    <fieldset className="wide mounts">
      <legend>Knowledge bases it searches</legend>
      {bases.length === 0 && <p className="muted">Create a knowledge base first.</p>}
      {bases.length > 0 && value.length === 0 && <p className="muted small pick-hint">Choose at least one.</p>}
      {bases.map((kb) => {
        const mount = mountOf(kb);
        return (
          <div key={kb.id} className="mount-row" data-mounted={Boolean(mount)}>
            <label className="check">
              <input type="checkbox" checked={Boolean(mount)} onChange={(e) => set(kb, e.target.checked ? {} : undefined)} />
              {kb.name}
            </label>
            <label>
              Top k
              <input type="number" min={0} max={100} aria-label={`${kb.name} top k`} disabled={!mount} value={mount?.topK ?? 0} onChange={(e) => set(kb, { topK: Number(e.target.value) })} title="0: the assistant's top k" />
            </label>
            <label>
              Priority
              <input type="number" aria-label={`${kb.name} priority`} disabled={!mount} value={mount?.priority ?? 0} onChange={(e) => set(kb, { priority: Number(e.target.value) })} />
            </label>
          </div>
        );
      })}
    </fieldset>
  );
}
