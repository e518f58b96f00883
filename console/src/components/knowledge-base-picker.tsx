// Choose one or more knowledge bases to search or ask. Nothing is chosen for the user: with several
// bases, a pre-selected one answers from a base the user never meant (issue 25).
import { quarry } from "../api/client.ts";
import { useLoad } from "../use-load.ts";
import { ErrorNote } from "./error-note.tsx";

export function KnowledgeBasePicker({ value, onChange }: { value: string[]; onChange: (names: string[]) => void }) {
  // An assistant's corrections base is Quarry's to manage and is searched through its assistant.
  const list = useLoad(() => quarry.listKnowledgeBases({}).then((r) => r.knowledgeBases.filter((kb) => !kb.correctionsForAssistantId)), []);
  const toggle = (name: string, on: boolean) => onChange(on ? [...value, name] : value.filter((v) => v !== name));
  return (
    <fieldset className="kb-picker">
      <legend>Knowledge bases</legend>
      <ErrorNote error={list.error} />
      {list.data?.length === 0 && <span className="muted">none yet</span>}
      {Boolean(list.data?.length) && value.length === 0 && <span className="muted small pick-hint">choose at least one</span>}
      {list.data?.map((kb) => (
        <label key={kb.id} className="check">
          <input type="checkbox" checked={value.includes(kb.name)} onChange={(e) => toggle(kb.name, e.target.checked)} />
          {kb.name}
        </label>
      ))}
    </fieldset>
  );
}
