// What a new conversation answers from: one of the assistants, or knowledge bases named directly.
import type { Assistant } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { KnowledgeBasePicker } from "../components/knowledge-base-picker.tsx";

export function ChatScopePicker({
  assistants,
  assistant,
  bases,
  onAssistant,
  onBases,
}: {
  assistants: Assistant[];
  assistant: string;
  bases: string[];
  onAssistant: (name: string) => void;
  onBases: (names: string[]) => void;
}) {
  return (
    <div className="chat-scope">
      {assistants.length > 0 && (
        <label className="scope-select">
          Answer with
          <select value={assistant} onChange={(e) => onAssistant(e.target.value)}>
            <option value="">knowledge bases I choose</option>
            {assistants.map((a) => (
              <option key={a.id} value={a.name}>
                assistant: {a.name}
              </option>
            ))}
          </select>
        </label>
      )}
      {!assistant && <KnowledgeBasePicker value={bases} onChange={onBases} />}
    </div>
  );
}
