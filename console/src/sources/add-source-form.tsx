// Add a source: its name, its kind (the settings that kind takes), tags, and a schedule. What the
// server refuses (a relative path, a start URL that is not http) is shown in its own words.
import { useState } from "react";
import { quarry } from "../api/client.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { FormActions } from "../components/form-actions.tsx";
import { useAction } from "../use-action.ts";
import { parseEvery } from "./schedule.ts";
import { kindFrom, SOURCE_KINDS, type KindCase, type SettingField } from "./source-kinds.tsx";

/** "team=ops" lines as a map; the first line that is not KEY=VALUE, if any. */
function parseTags(text: string): { tags: Record<string, string>; bad?: string } {
  const tags: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const at = line.indexOf("=");
    if (at <= 0) return { tags, bad: line };
    tags[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return { tags };
}

const initialValues = (fields: SettingField[]) => Object.fromEntries(fields.filter((f) => f.initial !== undefined).map((f) => [f.key, f.initial!]));

export function AddSourceForm({ knowledgeBase, onAdded, onCancel }: { knowledgeBase: string; onAdded: () => void; onCancel: () => void }) {
  const [name, setName] = useState("");
  const [kindCase, setKindCase] = useState<KindCase>(SOURCE_KINDS[0].case);
  const kind = SOURCE_KINDS.find((k) => k.case === kindCase)!;
  const [values, setValues] = useState<Record<string, string>>(() => initialValues(kind.fields));
  const [tagText, setTagText] = useState("");
  const [every, setEvery] = useState("");
  const { busy, error, run } = useAction();
  const [problem, setProblem] = useState<string>();

  const chooseKind = (next: KindCase) => {
    setKindCase(next);
    setValues(initialValues(SOURCE_KINDS.find((k) => k.case === next)!.fields));
  };

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const { tags, bad } = parseTags(tagText);
    const intervalSeconds = parseEvery(every);
    setProblem(bad ? `"${bad}" is not a tag: write KEY=VALUE, one per line` : intervalSeconds === undefined ? `"${every}" is not an interval such as 90, 30s, 15m, 6h or 1d` : undefined);
    if (bad || intervalSeconds === undefined) return;
    void run(async () => {
      await quarry.addSource({ knowledgeBase, source: { name: name.trim(), kind: kindFrom(kind, values), tags, intervalSeconds } });
      onAdded();
    });
  };

  return (
    <form className="panel form-grid" aria-label="New source" onSubmit={submit}>
      <label>
        Name
        <input autoFocus value={name} onChange={(e) => setName(e.target.value)} placeholder="handbook" />
      </label>
      <label>
        Kind
        <select value={kindCase} onChange={(e) => chooseKind(e.target.value as KindCase)}>
          {SOURCE_KINDS.map((k) => (
            <option key={k.case} value={k.case}>
              {k.label}
            </option>
          ))}
        </select>
      </label>
      {kind.fields.map((f) => (
        <label key={`${kind.case}.${f.key}`} className={f.type === "list" || f.key === "path" ? "wide" : undefined}>
          {f.label}
          {f.type === "list" ? (
            <textarea rows={2} value={values[f.key] ?? ""} placeholder={f.placeholder} onChange={(e) => setValues((v) => ({ ...v, [f.key]: e.target.value }))} />
          ) : (
            <input
              type={f.type === "number" ? "number" : f.type === "secret" ? "password" : "text"}
              min={f.type === "number" ? 0 : undefined}
              step={f.type === "number" ? "any" : undefined}
              value={values[f.key] ?? ""}
              placeholder={f.placeholder}
              onChange={(e) => setValues((v) => ({ ...v, [f.key]: e.target.value }))}
            />
          )}
        </label>
      ))}
      <label className="wide">
        Tags (KEY=VALUE, one per line: every document of the source carries them as metadata)
        <textarea rows={2} value={tagText} onChange={(e) => setTagText(e.target.value)} placeholder="team=ops" />
      </label>
      <label>
        Sync every (empty: only by hand)
        <input value={every} onChange={(e) => setEvery(e.target.value)} placeholder="30m, 6h, 1d" />
      </label>
      <ErrorNote error={problem ?? error} />
      <FormActions label="Add source" busyLabel="Adding…" busy={busy} onCancel={onCancel} />
    </form>
  );
}
