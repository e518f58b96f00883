export function ProgressBar({ percent, failed, label }: { percent: number; failed?: boolean; label: string }) {
  return (
    <div className={`progress${failed ? " failed" : ""}`} role="progressbar" aria-valuenow={percent} aria-valuemin={0} aria-valuemax={100} aria-label={label}>
      <div className="progress-fill" style={{ width: `${Math.max(0, Math.min(100, percent))}%` }} />
    </div>
  );
}
