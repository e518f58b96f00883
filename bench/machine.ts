// What the numbers were measured on. The machine is shared, so the load average is recorded at the
// start and end of each run: a ratio measured under a load of 16 on 2 cores reads differently.
import { cpus, freemem, loadavg, totalmem, release, platform } from "node:os";

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  freeMemoryGiB: number;
  node: string;
  os: string;
  loadAverage: [number, number, number];
  at: string;
}

export function describeMachine(): MachineInfo {
  const list = cpus();
  const [one, five, fifteen] = loadavg();
  const gib = (bytes: number) => Math.round((bytes / 2 ** 30) * 10) / 10;
  return {
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? "unknown",
    memoryGiB: gib(totalmem()),
    freeMemoryGiB: gib(freemem()),
    node: process.version,
    os: `${platform()} ${release()}`,
    loadAverage: [round2(one), round2(five), round2(fifteen)],
    at: new Date().toISOString(),
  };
}

export function loadAverageNow(): [number, number, number] {
  const [one, five, fifteen] = loadavg();
  return [round2(one), round2(five), round2(fifteen)];
}

export function machineLine(m: MachineInfo): string {
  return `${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB RAM, Node ${m.node}, ${m.os}; load average ${m.loadAverage.join(" / ")} (1/5/15 min)`;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
