import type { RetrievalMode } from "../../../gen/quarry/common/v1/common_pb.ts";
import { MODES } from "../retrieval-modes.ts";

export function ModeSelect({ value, onChange }: { value: RetrievalMode; onChange: (mode: RetrievalMode) => void }) {
  return (
    <label>
      Mode
      <select value={value} onChange={(e) => onChange(Number(e.target.value))}>
        {MODES.map((m) => (
          <option key={m.value} value={m.value}>
            {m.label}
          </option>
        ))}
      </select>
    </label>
  );
}
