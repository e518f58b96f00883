// A small SVG line chart for the benchmark plots. Hand-written rather than a charting library: the
// plots need axes, a log-scale x, a legend and one marker per measured point, which is ~100 lines,
// while the libraries that render SVG in Node without a browser pull in a DOM implementation.

export interface ChartPoint {
  x: number;
  y: number;
}

export interface ChartSeries {
  name: string;
  points: ChartPoint[];
}

export interface LineChart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: ChartSeries[];
  /** Log-10 x axis, for sizes spanning decades (1k, 10k, 100k chunks). */
  logX?: boolean;
  width?: number;
  height?: number;
}

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
const MARGIN = { top: 40, right: 230, bottom: 50, left: 64 };

export function lineChartSvg(chart: LineChart): string {
  const width = chart.width ?? 720;
  const height = chart.height ?? 400;
  const points = chart.series.flatMap((s) => s.points);
  if (points.length === 0) throw new RangeError("a chart needs at least one point");
  for (const p of points) {
    if (!Number.isFinite(p.x) || !Number.isFinite(p.y)) throw new RangeError(`point (${p.x}, ${p.y}) is not finite`);
    if (chart.logX && p.x <= 0) throw new RangeError(`log x axis needs positive x, got ${p.x}`);
  }
  const fx = (x: number) => (chart.logX ? Math.log10(x) : x);
  const xs = points.map((p) => fx(p.x));
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
  const y1 = niceCeil(Math.max(...points.map((p) => p.y), 0) * 1.05 || 1);
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const px = (x: number) => MARGIN.left + ((fx(x) - x0) / (x1 - x0)) * plotW;
  const py = (y: number) => MARGIN.top + plotH - (y / y1) * plotH;

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${escapeXml(chart.title)}</text>`);
  // Axes and grid.
  const yTicks = 5;
  for (let i = 0; i <= yTicks; i++) {
    const value = (y1 / yTicks) * i;
    const y = num(py(value));
    out.push(`<line x1="${MARGIN.left}" y1="${y}" x2="${MARGIN.left + plotW}" y2="${y}" stroke="#e0e0e0"/>`);
    out.push(`<text x="${MARGIN.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${formatTick(value)}</text>`);
  }
  const xTickValues = [...new Set(points.map((p) => p.x))].sort((a, b) => a - b);
  for (const value of xTickValues) {
    const x = num(px(value));
    out.push(`<line x1="${x}" y1="${MARGIN.top + plotH}" x2="${x}" y2="${MARGIN.top + plotH + 5}" stroke="#000"/>`);
    out.push(`<text x="${x}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${formatTick(value)}</text>`);
  }
  out.push(`<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${MARGIN.left + plotW}" y2="${MARGIN.top + plotH}" stroke="#000"/>`);
  out.push(`<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + plotH}" stroke="#000"/>`);
  out.push(`<text x="${MARGIN.left + plotW / 2}" y="${height - 10}" text-anchor="middle">${escapeXml(chart.xLabel)}</text>`);
  out.push(`<text transform="translate(16 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(chart.yLabel)}</text>`);
  // Series: a polyline through the points in x order, and a marker on each measured point.
  chart.series.forEach((series, i) => {
    const color = COLORS[i % COLORS.length];
    const sorted = [...series.points].sort((a, b) => a.x - b.x);
    out.push(`<g class="series" data-name="${escapeXml(series.name)}">`);
    if (sorted.length > 1) {
      out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${sorted.map((p) => `${num(px(p.x))},${num(py(p.y))}`).join(" ")}"/>`);
    }
    for (const p of sorted) {
      out.push(`<circle class="point" cx="${num(px(p.x))}" cy="${num(py(p.y))}" r="3.5" fill="${color}"><title>${escapeXml(`${series.name}: ${formatTick(p.x)} → ${formatTick(p.y)}`)}</title></circle>`);
    }
    out.push(`</g>`);
    const ly = MARGIN.top + 10 + i * 20;
    const lx = MARGIN.left + plotW + 16;
    out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 20}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    out.push(`<text x="${lx + 26}" y="${ly}" dominant-baseline="middle">${escapeXml(series.name)}</text>`);
  });
  out.push(`</svg>`);
  return out.join("\n") + "\n";
}

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);
}

function niceCeil(value: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

function formatTick(value: number): string {
  if (value >= 1000 && value % 1000 === 0) return `${value / 1000}k`;
  if (Number.isInteger(value)) return String(value);
  return value < 10 ? value.toFixed(2) : value.toFixed(1);
}

function num(value: number): string {
  return (Math.round(value * 10) / 10).toString();
}
