// The browser console's built files (console/dist), served on the gateway's own port for whatever
// the Connect router does not answer: same origin, so the console needs no CORS. A GET for a path
// without a file extension is a screen of the single-page app and gets index.html; a path shaped
// like an RPC (/package.Service/Method) or a missing asset gets 404, so a mistyped call or a stale
// bundle fails plainly instead of receiving HTML. Nothing outside the folder is ever read.
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { extname, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Where `npm run build` writes the console. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL("../../console/dist", import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
  ".txt": "text/plain; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

const RPC_PATH = /^\/[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+\/[^/]*$/;

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;

export function consoleAssets(dir: string = DEFAULT_CONSOLE_DIR): (req: Request, res: Response) => void {
  const root = resolve(dir);
  return (req, res) => {
    serve(root, req, res).catch(() => {
      if (!res.headersSent) send(res, 500, "text/plain; charset=utf-8", "the console's files could not be read\n");
      else res.end();
    });
  };
}

async function serve(root: string, req: Request, res: Response): Promise<void> {
  const path = pathOf(req.url ?? "/");
  if (path === undefined) return send(res, 400, "text/plain; charset=utf-8", "bad path\n");
  if (RPC_PATH.test(path)) return send(res, 404, "text/plain; charset=utf-8", `no such procedure: ${path}\n`);
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    return send(res, 405, "text/plain; charset=utf-8", "the console is read-only: GET or HEAD\n");
  }
  const file = resolve(root, `.${path}`);
  // resolve() has already folded every "..": what is left must still be inside the folder.
  if (file !== root && !file.startsWith(root + sep)) return send(res, 404, "text/plain; charset=utf-8", "not found\n");
  const found = await fileAt(file);
  if (found) return stream(req, res, found, extname(found) === ".html" ? "no-cache" : "public, max-age=31536000, immutable");
  if (extname(path)) return send(res, 404, "text/plain; charset=utf-8", `not found: ${path}\n`);
  const index = await fileAt(resolve(root, "index.html"));
  if (!index) {
    return send(res, 503, "text/plain; charset=utf-8", `the console is not built (no ${root}/index.html): run \`npm run build\`\n`);
  }
  return stream(req, res, index, "no-cache");
}

/** The decoded path, or undefined when it cannot be decoded or holds a NUL or a backslash. */
function pathOf(url: string): string | undefined {
  try {
    const path = decodeURIComponent(new URL(url, "http://console").pathname);
    return /[\0\\]/.test(path) ? undefined : path;
  } catch {
    return undefined;
  }
}

async function fileAt(path: string): Promise<string | undefined> {
  try {
    const s = await stat(path);
    if (s.isFile()) return path;
    if (s.isDirectory()) return fileAt(resolve(path, "index.html"));
  } catch {
    // Not there: the caller decides between index.html and 404.
  }
  return undefined;
}

async function stream(req: Request, res: Response, file: string, cacheControl: string): Promise<void> {
  const { size } = await stat(file);
  res.writeHead(200, {
    "Content-Type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
    "Content-Length": size,
    "Cache-Control": cacheControl,
    "X-Content-Type-Options": "nosniff",
  });
  if (req.method === "HEAD") {
    res.end();
    return;
  }
  await new Promise<void>((done, fail) => {
    const source = createReadStream(file);
    source.once("error", fail);
    source.once("end", done);
    source.pipe(res as NodeJS.WritableStream);
  });
}

function send(res: Response, status: number, contentType: string, body: string): void {
  res.writeHead(status, { "Content-Type": contentType, "Content-Length": Buffer.byteLength(body), "X-Content-Type-Options": "nosniff" });
  res.end(body);
}
