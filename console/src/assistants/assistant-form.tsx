// Create or edit an assistant: its prompt, the knowledge bases it mounts (each with its own top-k
// and priority) and its retrieval defaults. UpdateAssistant takes the whole configuration, so the
// form always sends every field.
import { useState } from "react";
import type { Assistant } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { QueryRewriteMode } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { FusionMethod, RetrievalMode, type KnowledgeBase } from "../../../gen/quarry/common/v1/common_pb.ts";
import { quarry } from "../api/client.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { FormActions } from "../components/form-actions.tsx";
import { ModeSelect } from "../components/mode-select.tsx";
import { REWRITE_MODES } from "../retrieval-modes.ts";
import { useAction } from "../use-action.ts";
import { MountsEditor, type MountDraft } from "./mounts-editor.tsx";

export function AssistantForm({ assistant, bases, onSaved, onCancel }: { assistant?: Assistant; bases: KnowledgeBase[]; onSaved: () => void; onCancel: () => void }) {
  const r = assistant?.retrieval;
  const [name, setName] = useState(assistant?.name ?? "");
  const [description, setDescription] = useState(assistant?.description ?? "");
  const [prompt, setPrompt] = useState(assistant?.systemPrompt ?? "");
  const [mounts, setMounts] = useState<MountDraft[]>(() =>
    assistant ? assistant.knowledgeBases.map((m) => ({ knowledgeBase: m.knowledgeBase, topK: m.topK, priority: m.priority })) : [],
  );
  const [mode, setMode] = useState<RetrievalMode>(r?.mode || RetrievalMode.HYBRID);
  const [topK, setTopK] = useState(r?.topK ?? 0);
  const [minScore, setMinScore] = useState(r?.minScore ?? 0);
  const [rerank, setRerank] = useState(r?.rerank ?? false);
  const [rewrite, setRewrite] = useState(r?.rewrite ?? QueryRewriteMode.UNSPECIFIED);
  const [fusion, setFusion] = useState(r?.fusion || FusionMethod.RRF);
  const [alpha, setAlpha] = useState(r?.convexAlpha ?? 0.8);
  const [hideFileNames, setHideFileNames] = useState(assistant?.hideFileNames ?? false);
  const { busy, error, run } = useAction();
  const label = assistant ? `Edit ${assistant.name}` : "New assistant";

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const config = {
      name: name.trim(),
      description,
      systemPrompt: prompt,
      knowledgeBases: mounts,
      // Alpha weighs only convex fusion: an RRF assistant stores none.
      retrieval: { mode, topK, minScore, rerank, rewrite, fusion, ...(fusion === FusionMethod.CONVEX ? { convexAlpha: alpha } : {}) },
      hideFileNames,
    };
    void run(async () => {
      if (assistant) await quarry.updateAssistant({ assistant: assistant.id, update: config });
      else await quarry.createAssistant({ assistant: config });
      onSaved();
    });
  };

  return (
    <form className="panel form-grid" aria-label={label} onSubmit={submit}>
      <h2 className="wide">{label}</h2>
      <label>
        Name
        <input required autoFocus value={name} onChange={(e) => setName(e.target.value)} placeholder="support" />
      </label>
      <label>
        Description
        <input value={description} onChange={(e) => setDescription(e.target.value)} placeholder="Who it is for" />
      </label>
      <label className="wide">
        System prompt
        <textarea rows={3} value={prompt} onChange={(e) => setPrompt(e.target.value)} placeholder="Instructions for the chat model, before the rules on citing (empty: the rules alone)" />
      </label>
      <MountsEditor bases={bases} value={mounts} onChange={setMounts} />
      <fieldset className="wide defaults">
        <legend>Retrieval defaults (a chat's own settings override them)</legend>
        <ModeSelect value={mode} onChange={setMode} />
        <label>
          Context chunks (top k)
          <input type="number" min={0} max={100} value={topK} onChange={(e) => setTopK(Number(e.target.value))} title="0: 8" />
        </label>
        <label>
          Score threshold
          <input type="number" min={0} max={1} step={0.05} value={minScore} onChange={(e) => setMinScore(Number(e.target.value))} />
        </label>
        <label>
          Fusion
          <select value={fusion} onChange={(e) => setFusion(Number(e.target.value))} title="How hybrid merges the keyword and vector lists">
            <option value={FusionMethod.RRF}>Reciprocal rank (default)</option>
            <option value={FusionMethod.CONVEX}>Convex, scores</option>
          </select>
        </label>
        {fusion === FusionMethod.CONVEX && (
          <label>
            Vector weight (α)
            <input type="number" min={0} max={1} step={0.05} value={alpha} onChange={(e) => setAlpha(Number(e.target.value))} title="alpha × vector + (1 − alpha) × BM25, each on 0–1" />
          </label>
        )}
        <label>
          Query rewrite
          <select value={rewrite} onChange={(e) => setRewrite(Number(e.target.value))}>
            {REWRITE_MODES.map((m) => (
              <option key={m.value} value={m.value}>
                {m.label}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input type="checkbox" checked={rerank} onChange={(e) => setRerank(e.target.checked)} />
          Rerank
        </label>
        <label className="check">
          <input type="checkbox" checked={hideFileNames} onChange={(e) => setHideFileNames(e.target.checked)} />
          Hide file names from the model
        </label>
      </fieldset>
      <ErrorNote error={error} />
      <FormActions label={assistant ? "Save" : "Create"} busyLabel="Saving…" busy={busy} disabled={!name.trim() || mounts.length === 0} onCancel={onCancel} />
    </form>
  );
}
