import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../lib/errors.ts";
import { parseSvg } from "./svg-parser.ts";

const CHART = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 200">
  <title>Ingest rate by week</title>
  <desc>Documents ingested per week, &amp; the failures among them.</desc>
  <style>.axis { stroke: #333; font: 12px sans-serif }</style>
  <defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient></defs>
  <path d="M10 190 L60 120 L110 140 L160 60" fill="none" stroke="url(#g)"/>
  <text x="10" y="20" class="axis">Week
    <tspan dy="1.2em">one</tspan></text>
  <g><text x="60" y="20">1,204 documents</text><text/></g>
  <script>alert("not text")</script>
</svg>`;

describe("parseSvg", () => {
  it("keeps the title, the description and each text element, one line each, and no markup", () => {
    expect(parseSvg(CHART).text).toBe(["Ingest rate by week", "Documents ingested per week, & the failures among them.", "Week one", "1,204 documents"].join("\n"));
  });

  it("refuses a drawing without words", () => {
    expect(() => parseSvg('<svg xmlns="http://www.w3.org/2000/svg"><circle r="4"/></svg>')).toThrow(InvalidInputError);
  });
});
