#!/usr/bin/env node
// Sums a folder of node --cpu-prof profiles (one file per thread, as `quarry bench observability
// --cpu-prof` writes them) into where the samples fell: per thread, per area (an npm package, a
// Quarry folder, a node internal, GC) and per function. It counts samples, not the time between
// them: on a loaded machine a thread waiting for a core stretches the gap before its next sample,
// so summed time deltas measure the load; the count at the sampling interval is the closer to CPU.
// Idle samples (`(idle)`, piscina's `atomicsWaitLoop`) are left out.
//
//   node scripts/cpu-profile-summary.mjs DIR [--main] [--from US --to US] [--top N] [--interval-us 1000]
//
// --main keeps the main thread's profile only (thread id 0 in the file name); --from/--to keep the
// samples inside a window of the profiles' monotonic clock (microseconds, as process.hrtime gives).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    main: { type: "boolean", default: false },
    from: { type: "string" },
    to: { type: "string" },
    top: { type: "string", default: "25" },
    "interval-us": { type: "string", default: "1000" },
  },
});
const [dir] = positionals;
if (!dir) {
  console.error("usage: node scripts/cpu-profile-summary.mjs DIR [--main] [--from US --to US] [--top N]");
  process.exit(2);
}
const from = values.from ? Number(values.from) : -Infinity;
const to = values.to ? Number(values.to) : Infinity;
const interval = Number(values["interval-us"]);
const IDLE = new Set(["(idle)", "atomicsWaitLoop"]);

/** The area a frame belongs to: its npm package, its Quarry folder, a node internal, or V8's own. */
function area(frame) {
  const url = frame.url || "";
  if (!url) return frame.functionName.startsWith("(") ? frame.functionName : "(native)";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const parts = url.slice(nm + "node_modules/".length).split("/");
    return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith("node:")) return url.includes("async_hooks") ? "node:async_hooks (promise hooks)" : `node:${url.slice(5).split("/").slice(0, 2).join("/")}`;
  // A Quarry module, from whichever checkout ran (the bench may compare two): its top two folders.
  const inRepo = /\/((?:lib|services|gateway|app|bench|cli|client|eval)\/.*)$/.exec(url);
  if (!inRepo) return url;
  const path = inRepo[1].split("/");
  return `quarry:${path.slice(0, path.length > 2 ? 2 : 1).join("/")}`;
}

const totals = { thread: new Map(), area: new Map(), fn: new Map() };
const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile") && (!values.main || /\.\d+\.0\.\d+\.cpuprofile$/.test(f)));
for (const file of files) {
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8"));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    if (t < from || t > to) continue;
    const frame = nodes.get(profile.samples[i]).callFrame;
    if (IDLE.has(frame.functionName)) continue;
    const where = area(frame);
    add(totals.thread, file.split(".").slice(3, 5).join(" thread "), interval);
    add(totals.area, where, interval);
    add(totals.fn, `${where} ${frame.functionName || "(anonymous)"}`, interval);
  }
}
const seconds = (us) => (us / 1e6).toFixed(2).padStart(7);
const table = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)).map(([k, us]) => `${seconds(us)}  ${k}`).join("\n");
const busy = [...totals.thread.values()].reduce((a, b) => a + b, 0);
console.log(`busy ${seconds(busy)} s in ${files.length} profile(s)\n-- threads (pid thread id)\n${table(totals.thread)}\n-- self by area\n${table(totals.area)}\n-- self by function\n${table(totals.fn)}`);
