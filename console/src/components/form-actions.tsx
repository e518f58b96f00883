// A form's submit button (its label while busy) and its cancel button.
export function FormActions({ label, busyLabel, busy, disabled, onCancel }: { label: string; busyLabel: string; busy: boolean; disabled?: boolean; onCancel: () => void }) {
  return (
    <div className="form-actions wide">
      <button type="submit" className="primary" disabled={busy || disabled}>
        {busy ? busyLabel : label}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}
