// Choose one or more knowledge bases to search or ask; the first is chosen when nothing is yet.
import { useEffect } from "react";
import { quarry } from "../api/client.ts";
import { useLoad } from "../use-load.ts";
import { ErrorNote } from "./error-note.tsx";

export function KnowledgeBasePicker({ value, onChange }: { value: string[]; onChange: (names: string[]) => void }) {
  // An assistant's corrections base is Quarry's to manage and is searched through its assistant.
  const list = useLoad(() => quarry.listKnowledgeBases({}).then((r) => r.knowledgeBases.filter((kb) => !kb.correctionsForAssistantId)), []);
  useEffect(() => {
    if (value.length === 0 && list.data?.length) onChange([list.data[0].name]);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [list.data]);
  const toggle = (name: string, on: boolean) => onChange(on ? [...value, name] : value.filter((v) => v !== name));
  return (
    <fieldset className="kb-picker">
      <legend>Knowledge bases</legend>
      <ErrorNote error={list.error} />
      {list.data?.length === 0 && <span className="muted">none yet</span>}
      {list.data?.map((kb) => (
        <label key={kb.id} className="check">
          <input type="checkbox" checked={value.includes(kb.name)} onChange={(e) => toggle(kb.name, e.target.checked)} />
          {kb.name}
        </label>
      ))}
    </fieldset>
  );
}
