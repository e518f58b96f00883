// Peak memory of this process: RSS sampled on a timer (what the run looked like over time) and the
// kernel's own high-water mark (VmHWM in /proc/self/status, which no sampling interval can miss).
import { readFileSync } from "node:fs";

export interface MemoryPeak {
  sampledPeakRssMiB: number;
  /** The kernel's peak RSS for the whole process lifetime; null where /proc is absent. */
  vmHwmMiB: number | null;
  samples: number;
}

export function startMemorySampler(intervalMs = 100): { stop(): MemoryPeak } {
  let peak = process.memoryUsage.rss();
  let samples = 1;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
    samples++;
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      return { sampledPeakRssMiB: mib(peak), vmHwmMiB: readVmHwmMiB(), samples: samples + 1 };
    },
  };
}

export function readVmHwmMiB(): number | null {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync("/proc/self/status", "utf8"));
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

function mib(bytes: number): number {
  return Math.round(bytes / 2 ** 20);
}
