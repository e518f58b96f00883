export type StatusFilterValue = "all" | "working" | "ready" | "failed";

const OPTIONS: { value: StatusFilterValue; label: string }[] = [
  { value: "all", label: "All" },
  { value: "working", label: "In progress" },
  { value: "ready", label: "Ready" },
  { value: "failed", label: "Failed" },
];

export function StatusFilter({ value, onChange, counts }: { value: StatusFilterValue; onChange: (v: StatusFilterValue) => void; counts: Record<StatusFilterValue, number> }) {
  return (
    <div className="segmented" role="radiogroup" aria-label="Filter by status">
      {OPTIONS.map((o) => (
        <button key={o.value} type="button" role="radio" aria-checked={value === o.value} className={value === o.value ? "on" : ""} onClick={() => onChange(o.value)}>
          {o.label} <span className="muted">{counts[o.value]}</span>
        </button>
      ))}
    </div>
  );
}
