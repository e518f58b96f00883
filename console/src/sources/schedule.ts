// A source's schedule in words and back: "6h" ↔ interval_seconds, as the CLI's --every reads it.
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

const UNITS = { "": 1, s: 1, m: 60, h: 3600, d: 86400 } as const;

/** Seconds for "90", "30s", "15m", "6h", "1d"; 0 for empty (manual only); undefined when unreadable. */
export function parseEvery(text: string): number | undefined {
  if (!text.trim()) return 0;
  const match = /^(\d+)\s*([smhd]?)$/i.exec(text.trim());
  return match ? Number(match[1]) * UNITS[match[2].toLowerCase() as keyof typeof UNITS] : undefined;
}

/** "manual", "every 6 h", "every 90 s". */
export function describeEvery(seconds: number): string {
  if (!seconds) return "manual";
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["min", 60]] as const) if (seconds % size === 0) return `every ${seconds / size} ${unit}`;
  return `every ${seconds} s`;
}

export function formatWhen(t: Timestamp | Date | undefined): string {
  if (!t) return "";
  const date = t instanceof Date ? t : timestampDate(t);
  return date.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" });
}

/** "0.4 s", "12 s", "3 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 10_000) return `${(Math.max(ms, 0) / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
}
