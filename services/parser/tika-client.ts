// A small typed client for Apache Tika server's REST API. Hand-written because npm has no
// maintained Tika client (the packages there are years stale and wrap the Java CLI or an old
// server API), and the few endpoints used here are plain PUTs of the file's bytes.
import { FailedPreconditionError, InvalidInputError, UnavailableError } from "../../lib/errors.ts";

export interface TikaClientOptions {
  /** e.g. "http://127.0.0.1:9998" */
  baseUrl: string;
  /** Per request; a large scanned PDF under OCR takes a while. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** One document (the container first, then each embedded file) from /rmeta/text. */
export type TikaMetadata = Record<string, string | string[]>;

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_MESSAGE_CHARS = 300;

export class TikaClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: TikaClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** The MIME type Tika detects from the bytes and the name. */
  async detect(bytes: Uint8Array, fileName: string): Promise<string> {
    const response = await this.request("PUT", "/detect/stream", { bytes, fileName, accept: "text/plain" });
    return (await response.text()).trim();
  }

  /**
   * The document as XHTML: <meta> tags in the head, and for PDFs one <div class="page"> per page.
   * A mimeType overrides Tika's own detection (Tika 3 reads the request's Content-Type so), so pass
   * one only when it is certain; without it the bytes go as application/octet-stream, which Tika
   * ignores.
   */
  async parseToXhtml(bytes: Uint8Array, fileName: string, mimeType?: string): Promise<string> {
    const response = await this.request("PUT", "/tika", { bytes, fileName, mimeType, accept: "text/html" });
    return response.text();
  }

  /** Metadata and plain text (X-TIKA:content) of the document and of every embedded document. */
  async rmetaText(bytes: Uint8Array, fileName: string, mimeType?: string): Promise<TikaMetadata[]> {
    const response = await this.request("PUT", "/rmeta/text", { bytes, fileName, mimeType, accept: "application/json" });
    return (await response.json()) as TikaMetadata[];
  }

  /** e.g. "Apache Tika 3.2.3"; doubles as a health check. */
  async version(): Promise<string> {
    const response = await this.request("GET", "/version", { accept: "text/plain" });
    return (await response.text()).trim();
  }

  private async request(
    method: "GET" | "PUT",
    path: string,
    options: { bytes?: Uint8Array; fileName?: string; mimeType?: string; accept: string },
  ): Promise<Response> {
    const headers: Record<string, string> = { Accept: options.accept };
    if (options.fileName) headers["Content-Disposition"] = contentDisposition(options.fileName);
    if (options.bytes) headers["Content-Type"] = options.mimeType || "application/octet-stream";

    const url = `${this.baseUrl}${path}`;
    let response: Response;
    try {
      response = await this.fetch(url, {
        method,
        headers,
        // Uploads are never backed by a SharedArrayBuffer, which is all the cast rules out.
        body: options.bytes as Uint8Array<ArrayBuffer> | undefined,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const name = (error as Error)?.name;
      if (name === "TimeoutError" || name === "AbortError") {
        throw new UnavailableError(`Tika at ${this.baseUrl} did not answer within ${this.timeoutMs} ms`, { cause: error });
      }
      throw new UnavailableError(`Tika at ${this.baseUrl} is unreachable: ${describeFetchError(error)}`, { cause: error });
    }
    if (response.ok) return response;

    const message = await errorMessage(response);
    const subject = options.fileName ?? path;
    // 415: no parser for this type; 422: a known type Tika could not parse (corrupt, encrypted).
    if (response.status === 415) throw new FailedPreconditionError(`Tika cannot read ${subject} (unsupported type)${message}`);
    if (response.status === 422) throw new InvalidInputError(`Tika could not parse ${subject}${message}`);
    throw new UnavailableError(`Tika at ${this.baseUrl} answered ${response.status} ${response.statusText} for ${path}${message}`);
  }
}

/** Tika detects by name as well as by content. Header values must be Latin-1, so the plain filename keeps only ASCII (with the extension intact) and filename* carries the real one. */
function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

function describeFetchError(error: unknown): string {
  // undici puts the useful part (ECONNREFUSED, ENOTFOUND) in the cause.
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.message || cause?.code || (error as Error)?.message || String(error);
}

async function errorMessage(response: Response): Promise<string> {
  const body = (await response.text().catch(() => "")).trim();
  if (!body) return "";
  // Tika answers errors with a Java stack trace; its first line is the exception and its message.
  const firstLine = body.split("\n")[0].trim();
  return `: ${firstLine.length > MAX_MESSAGE_CHARS ? `${firstLine.slice(0, MAX_MESSAGE_CHARS)}…` : firstLine}`;
}
