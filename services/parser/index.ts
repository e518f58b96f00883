// The parser's public face: what app/, cli/, bench/, eval/ and test/ may use (the import rules in
// .dependency-cruiser.cjs allow nothing else of this folder outside it).
export { assembleParser } from "./main.ts";
export { describeFormat, formatOfFileName } from "./format-detection.ts";
export { parseMarkdown } from "./parsers/markdown-parser.ts";
