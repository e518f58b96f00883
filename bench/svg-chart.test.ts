import { Parser } from "htmlparser2";
import { describe, expect, it } from "vitest";
import { lineChartSvg } from "./svg-chart.ts";

interface Element {
  name: string;
  attribs: Record<string, string>;
  parent?: Element;
  children: Element[];
}

/** Parses as XML and fails on anything not well formed: a close tag that matches no open one, an implied close, or an unclosed element. */
function parseStrictXml(xml: string): Element {
  const root: Element = { name: "#document", attribs: {}, children: [] };
  let current = root;
  let justOpened = false;
  const problems: string[] = [];
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const element: Element = { name, attribs, parent: current, children: [] };
        current.children.push(element);
        current = element;
        justOpened = true;
      },
      ontext() {
        justOpened = false;
      },
      onclosetag(name, isImplied) {
        // A self-closing tag is an implied close right after its own open; any other implied close is a missing end tag.
        const selfClosing = isImplied && justOpened;
        if ((isImplied && !selfClosing) || current.name !== name) problems.push(`</${name}> closes <${current.name}>${isImplied ? " (implied)" : ""}`);
        current = current.parent ?? root;
        justOpened = false;
      },
      onerror(error) {
        problems.push(error.message);
      },
    },
    { xmlMode: true },
  );
  parser.end(xml);
  if (current !== root) problems.push(`<${current.name}> is never closed`);
  expect(problems).toEqual([]);
  return root;
}

function all(element: Element, predicate: (e: Element) => boolean): Element[] {
  return [...(predicate(element) ? [element] : []), ...element.children.flatMap((c) => all(c, predicate))];
}

describe("lineChartSvg", () => {
  const chart = {
    title: "Search latency <p50> & scale",
    xLabel: "chunks",
    yLabel: "ms",
    logX: true,
    series: [
      { name: "embedded hybrid", points: [{ x: 1000, y: 2 }, { x: 10000, y: 8 }, { x: 100000, y: 70 }] },
      { name: "opensearch hybrid", points: [{ x: 100000, y: 30 }, { x: 1000, y: 12 }] },
    ],
  };

  it("produces one well-formed <svg> root with the SVG namespace", () => {
    const doc = parseStrictXml(lineChartSvg(chart));
    expect(doc.children).toHaveLength(1);
    expect(doc.children[0].name).toBe("svg");
    expect(doc.children[0].attribs.xmlns).toBe("http://www.w3.org/2000/svg");
  });

  it("draws one marker per point and one line per series, inside the canvas", () => {
    const svg = parseStrictXml(lineChartSvg(chart)).children[0];
    const groups = all(svg, (e) => e.name === "g" && e.attribs.class === "series");
    expect(groups.map((g) => g.attribs["data-name"])).toEqual(["embedded hybrid", "opensearch hybrid"]);
    expect(all(groups[0], (e) => e.name === "circle")).toHaveLength(3);
    expect(all(groups[1], (e) => e.name === "circle")).toHaveLength(2);
    const polyline = all(groups[1], (e) => e.name === "polyline")[0];
    expect(polyline.attribs.points.split(" ")).toHaveLength(2);
    const [width, height] = [Number(svg.attribs.width), Number(svg.attribs.height)];
    for (const circle of all(svg, (e) => e.name === "circle")) {
      const [cx, cy] = [Number(circle.attribs.cx), Number(circle.attribs.cy)];
      expect(cx).toBeGreaterThanOrEqual(0);
      expect(cx).toBeLessThanOrEqual(width);
      expect(cy).toBeGreaterThanOrEqual(0);
      expect(cy).toBeLessThanOrEqual(height);
    }
  });

  it("puts a larger y higher on the canvas and orders x left to right", () => {
    const svg = parseStrictXml(lineChartSvg(chart)).children[0];
    const [a, b, c] = all(svg, (e) => e.name === "g" && e.attribs.class === "series")[0].children.filter((e) => e.name === "circle");
    expect(Number(a.attribs.cx)).toBeLessThan(Number(b.attribs.cx));
    expect(Number(b.attribs.cx)).toBeLessThan(Number(c.attribs.cx));
    expect(Number(c.attribs.cy)).toBeLessThan(Number(a.attribs.cy));
  });

  it("the well-formedness check itself rejects a missing end tag", () => {
    expect(() => parseStrictXml("<svg><g><title>x</g></svg>")).toThrow();
  });

  it("escapes text and refuses charts it cannot draw", () => {
    expect(lineChartSvg(chart)).toContain("Search latency &lt;p50&gt; &amp; scale");
    expect(() => lineChartSvg({ ...chart, series: [] })).toThrow(RangeError);
    expect(() => lineChartSvg({ ...chart, series: [{ name: "bad", points: [{ x: 0, y: 1 }] }] })).toThrow(RangeError);
  });
});
