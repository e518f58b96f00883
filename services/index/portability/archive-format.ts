// The knowledge-base archive's bytes (docs/PORTABILITY.md): gzip-compressed JSON lines — a header,
// one line per document with its chunks, and a closing line with the counts and the SHA-256 of every
// line before it. Written and read as streams, one document at a time, so a big base is never held
// whole. gzip (node:zlib) and JSON lines rather than a container format: every language reads them,
// and gzip's own CRC plus the closing checksum tell a corrupt or truncated file from a good one.
import { createHash, type Hash } from "node:crypto";
import { Readable } from "node:stream";
import { createGunzip, createGzip } from "node:zlib";
import { createInterface } from "node:readline";
import type { ChunkDraft, ChunkingSettings, DocumentStatus } from "../../../lib/domain.ts";
import { InvalidInputError } from "../../../lib/errors.ts";

export const ARCHIVE_FORMAT = "quarry.knowledge-base-archive";
/**
 * Bumped when a field is added or changes meaning; a reader refuses versions newer than its own.
 * 2 added assistants (and their corrections' documents). A writer marks an archive with the lowest
 * version that holds what it carries, so one without assistants stays readable by version-1 readers.
 */
export const ARCHIVE_VERSION = 2;

/** A knowledge base's settings as archived: enough to make it again. */
export interface ArchivedKnowledgeBase {
  name: string;
  description: string;
  embeddingModel: string;
  embeddingDimension: number;
  chunking: ChunkingSettings;
}

/**
 * An assistant that mounts the archived base (version 2): its configuration as protobuf JSON
 * (quarry.common.v1.Assistant, so every field it has travels) without its id, times, mounts and
 * corrections base; its mount of the archived base; and its corrections base's settings and how many
 * document lines (marked correctionsOf with this assistant's position) follow the base's documents.
 */
export interface ArchivedAssistant {
  assistant: Record<string, unknown>;
  mount: { topK: number; priority: number };
  corrections?: { knowledgeBase: ArchivedKnowledgeBase; documents: number };
}

export interface ArchiveHeader {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  exportedAt: string;
  knowledgeBase: ArchivedKnowledgeBase;
  /** Whether the chunks carry their vectors; without them an import embeds again. */
  vectors: boolean;
  /** Version 2, when the export asked for them: the assistants that mount the base. */
  assistants?: ArchivedAssistant[];
  /** What the export left out and why, one line each, for the person importing it. */
  manifest?: string[];
}

/**
 * A chunk as archived: every field the chunker gave it, no ids (the importing base names them anew),
 * and its vector as little-endian float32 in base64 (absent in an archive without vectors).
 */
export type ArchivedChunk = ChunkDraft & { vector?: string };

export interface ArchivedDocument {
  fileName: string;
  mimeType: string;
  sizeBytes: number;
  contentHash: string;
  version: number;
  status: DocumentStatus;
  errorMessage: string;
  enabled: boolean;
  metadata: Record<string, string>;
  chunkCount: number;
  tokenCount: number;
  createdAt: string;
  /** Whether the document was also embedded whole (its vector in documentVector when vectors are kept). */
  wholeDocumentVector: boolean;
  documentVector?: string;
  chunks: ArchivedChunk[];
  /** Version 2: a document of this assistant's (its position in the header) corrections base; absent: of the archived base. */
  correctionsOf?: number;
}

interface ArchiveEnd {
  end: true;
  documents: number;
  chunks: number;
  /** SHA-256 (hex) of every line before this one, newlines included. */
  sha256: string;
}

export function encodeVector(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64");
}

export function decodeVector(text: string, dimension: number, where: string): Float32Array {
  const bytes = Buffer.from(text, "base64");
  if (bytes.byteLength !== dimension * 4) {
    throw corrupt(`${where} has a vector of ${bytes.byteLength / 4} dimensions where the archive's model has ${dimension}`);
  }
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

/** The archive's bytes, compressed as they are produced: the documents are read one at a time. */
export function writeArchive(header: Omit<ArchiveHeader, "format" | "version">, documents: AsyncIterable<ArchivedDocument>): AsyncIterable<Uint8Array> {
  async function* lines(): AsyncGenerator<string> {
    const hash = createHash("sha256");
    const line = (value: unknown) => {
      const text = `${JSON.stringify(value)}\n`;
      hash.update(text);
      return text;
    };
    yield line({ format: ARCHIVE_FORMAT, version: header.assistants?.length ? 2 : 1, ...header });
    let count = 0;
    let chunks = 0;
    for await (const document of documents) {
      count++;
      chunks += document.chunks.length;
      yield line(document);
    }
    const end: ArchiveEnd = { end: true, documents: count, chunks, sha256: hash.digest("hex") };
    yield `${JSON.stringify(end)}\n`;
  }
  return Readable.from(lines()).pipe(createGzip());
}

export interface ArchiveReader {
  header: ArchiveHeader;
  /** The documents in order; throws InvalidInputError when the archive turns out corrupt or truncated. */
  documents: AsyncIterable<ArchivedDocument>;
}

/**
 * Reads the header at once (so a wrong file or version is refused before anything is made), then
 * the documents as they are consumed. The closing line is checked after the last document: a caller
 * that writes as it reads must undo its writes when iteration throws.
 */
export async function readArchive(bytes: AsyncIterable<Uint8Array>): Promise<ArchiveReader> {
  const gunzip = createGunzip();
  const input = Readable.from(bytes);
  input.on("error", (error) => gunzip.destroy(error));
  const lines = createInterface({ input: input.pipe(gunzip), crlfDelay: Infinity })[Symbol.asyncIterator]();
  const hash = createHash("sha256");
  const first = await nextLine(lines, hash);
  if (first === undefined) throw truncated("it is empty");
  const header = parseLine(first, "its header") as Partial<ArchiveHeader>;
  if (header.format !== ARCHIVE_FORMAT) throw new InvalidInputError("this file is not a Quarry knowledge-base archive (its first line does not name the format)");
  if (typeof header.version !== "number" || header.version > ARCHIVE_VERSION) {
    throw new InvalidInputError(`the archive is of version ${String(header.version)}, newer than this Quarry reads (${ARCHIVE_VERSION}): upgrade Quarry to import it`);
  }
  if (!header.knowledgeBase?.embeddingModel || !header.knowledgeBase.embeddingDimension) throw corrupt("its header names no embedding model");
  const assistants = header.assistants ?? [];
  if (!Array.isArray(assistants) || assistants.some((a) => typeof a?.assistant?.name !== "string" || (a.corrections && !a.corrections.knowledgeBase?.embeddingModel))) {
    throw corrupt("its header's assistants are not well formed");
  }
  return { header: header as ArchiveHeader, documents: documentsOf(lines, hash, assistants) };
}

async function* documentsOf(lines: AsyncIterator<string>, hash: Hash, assistants: readonly ArchivedAssistant[]): AsyncGenerator<ArchivedDocument> {
  let documents = 0;
  let chunks = 0;
  // Each corrections base's documents, counted against what the header announced.
  const corrections = assistants.map(() => 0);
  for (;;) {
    const before = hash.copy();
    const text = await nextLine(lines, hash);
    if (text === undefined) throw truncated(`it ends after ${documents} documents without its closing line`);
    const value = parseLine(text, `line ${documents + 2}`) as Partial<ArchiveEnd> & Partial<ArchivedDocument>;
    if (value.end === true) {
      if (value.documents !== documents || value.chunks !== chunks) {
        throw corrupt(`its closing line counts ${String(value.documents)} documents and ${String(value.chunks)} chunks, the file holds ${documents} and ${chunks}`);
      }
      if (value.sha256 !== before.digest("hex")) throw corrupt("its checksum does not match its contents");
      if ((await nextLine(lines, hash)) !== undefined) throw corrupt("it has data after its closing line");
      const short = assistants.findIndex((a, i) => (a.corrections?.documents ?? 0) !== corrections[i]);
      if (short >= 0) throw corrupt(`its header announces ${assistants[short].corrections?.documents ?? 0} corrections of the assistant ${String(assistants[short].assistant.name)}, the file holds ${corrections[short]}`);
      return;
    }
    if (typeof value.fileName !== "string" || !Array.isArray(value.chunks)) throw corrupt(`line ${documents + 2} is not a document`);
    if (value.correctionsOf !== undefined) {
      if (!assistants[value.correctionsOf]?.corrections) throw corrupt(`line ${documents + 2} is a correction of an assistant the header does not hold`);
      corrections[value.correctionsOf]++;
    }
    documents++;
    chunks += value.chunks.length;
    yield value as ArchivedDocument;
  }
}

async function nextLine(lines: AsyncIterator<string>, hash: Hash): Promise<string | undefined> {
  let next: IteratorResult<string>;
  try {
    next = await lines.next();
  } catch (error) {
    throw unreadable(error);
  }
  if (next.done) return undefined;
  hash.update(`${next.value}\n`);
  return next.value;
}

function parseLine(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw corrupt(`${what} is not valid JSON`);
  }
}

/** What zlib says of a broken stream, in words for the person importing it. */
function unreadable(error: unknown): InvalidInputError {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "Z_BUF_ERROR" || /unexpected end/i.test(message)) return truncated("its compressed data stops mid-way");
  return corrupt(`its compressed data cannot be read (${message})`);
}

function corrupt(why: string): InvalidInputError {
  return new InvalidInputError(`the archive is corrupt: ${why}`);
}

function truncated(why: string): InvalidInputError {
  return new InvalidInputError(`the archive is truncated: ${why}; export it again`);
}
