// The Grafana dashboard (deploy/observability/grafana/quarry-dashboard.json) is valid dashboard JSON
// over metrics that exist: every expression names only metrics a Quarry process registers (a renamed
// metric breaks this test, not a graph nobody looks at), every Quarry metric is on some panel, and
// Debian's promtool (from the prometheus package CI installs) parses every expression.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { describeWith } from "../../test/support/engines.ts";
import { PrometheusMetrics } from "./prometheus-metrics.ts";

const DASHBOARD = resolve(import.meta.dirname, "../../deploy/observability/grafana/quarry-dashboard.json");

interface Target {
  expr: string;
  refId: string;
}
interface Panel {
  type: string;
  title: string;
  id: number;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
}

const dashboard = JSON.parse(await readFile(DASHBOARD, "utf8")) as { title: string; uid: string; schemaVersion: number; panels: Panel[]; templating: { list: { name: string }[] } };
const graphs = dashboard.panels.filter((p) => p.type !== "row");
const expressions = graphs.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

/** PromQL words that are not metric names. */
const KEYWORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset"]);

/**
 * The metric names in a PromQL expression: what is left after label matchers, ranges, grouping
 * clauses and strings are cut out, less function names (followed by "(") and keywords.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, "")
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, "");
  const names: string[] = [];
  for (const match of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = bare.slice(match.index + match[0].length).trimStart();
    if (after.startsWith("(") || KEYWORDS.has(match[0])) continue;
    names.push(match[0]);
  }
  return names;
}

/** Every series name a Quarry process exposes: each family, and a histogram's _bucket, _sum and _count. */
async function registeredNames(): Promise<{ series: Set<string>; quarryFamilies: string[] }> {
  const metrics = new PrometheusMetrics();
  const families = await metrics.registry.getMetricsAsJSON();
  const series = new Set<string>();
  for (const family of families) {
    series.add(family.name);
    if (String(family.type) === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) series.add(family.name + suffix);
  }
  return { series, quarryFamilies: families.map((f) => f.name).filter((n) => n.startsWith("quarry_")) };
}

describe("the Grafana dashboard", () => {
  it("is a dashboard Grafana can import: title, uid, a Prometheus datasource variable, panels on the grid with unique ids", () => {
    expect(dashboard.title).toBe("Quarry");
    expect(dashboard.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.templating.list.map((v) => v.name)).toContain("datasource");
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
    expect(dashboard.panels.filter((p) => p.type === "row").map((p) => p.title)).toEqual(["Ingestion", "Search", "Answers", "Engines and processes"]);
    for (const p of graphs) expect(p.targets?.length, p.title).toBeGreaterThan(0);
  });

  it("reads the metric names out of an expression (so the next check means something)", () => {
    expect(metricNames('histogram_quantile(0.95, sum by (le, stage) (rate(quarry_stage_event_duration_seconds_bucket{stage="index"}[$__rate_interval])))')).toEqual([
      "quarry_stage_event_duration_seconds_bucket",
    ]);
    expect(metricNames("sum(rate(a_sum[5m])) / sum without (x) (b_count) and on (y) c")).toEqual(["a_sum", "b_count", "c"]);
  });

  it("names only metrics Quarry registers, and shows every Quarry metric", async () => {
    const { series, quarryFamilies } = await registeredNames();
    const unknown = expressions.flatMap(({ panel, expr }) => metricNames(expr).filter((name) => !series.has(name)).map((name) => `${panel}: ${name}`));
    expect(unknown).toEqual([]);
    const shown = new Set(expressions.flatMap(({ expr }) => metricNames(expr)));
    const unshown = quarryFamilies.filter((family) => ![family, `${family}_bucket`, `${family}_sum`, `${family}_count`].some((n) => shown.has(n)));
    expect(unshown).toEqual([]);
  });
});

const promtool = {
  value: process.env.QUARRY_PROMTOOL_BIN ?? (existsSync("/usr/bin/promtool") ? "/usr/bin/promtool" : undefined),
  requiredBy: "QUARRY_REQUIRE_ENGINES" as const,
  missing: "promtool (Debian's prometheus package) is not installed",
  hint: "Install it with apt-get install -y prometheus (CI does, in .ci/run)",
};

describeWith(promtool, "the dashboard's PromQL, checked by promtool", (bin) => {
  it("parses every expression as a recording rule", async () => {
    const dir = await mkdtemp(join(tmpdir(), "quarry-dashboard-"));
    try {
      // Grafana's $__rate_interval is a range like any other for the parser.
      const rules = expressions.map(({ expr }, i) => `      - record: quarry:dashboard:${i}\n        expr: ${JSON.stringify(expr.replaceAll("$__rate_interval", "5m"))}`);
      await writeFile(join(dir, "rules.yml"), `groups:\n  - name: dashboard\n    rules:\n${rules.join("\n")}\n`);
      const { stdout } = await promisify(execFile)(bin, ["check", "rules", join(dir, "rules.yml")]);
      expect(stdout).toContain(`SUCCESS: ${expressions.length} rules found`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
