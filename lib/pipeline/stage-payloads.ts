// The claim check for stage outputs: an encoded event above the inline limit is written to the blob
// store, and the bus carries only the document's identity and the blob's reference (payload_uri).
// A 10 MiB text becomes a 10 MiB documents.parsed, a 14 MiB chunks.created and a larger
// chunks.embedded; inline, each was copied through the bus on the main thread (a SQLite row, or a
// Kafka message past the broker's 16 MiB limit), and every consumer that only routes it paid for
// the whole payload. The whole message lies at payloads/<kb>/<doc>/<version>.<topic>, so a
// document's or a base's deletion removes it by prefix, and a newer ready version removes the older
// versions' (see dropSuperseded).
import type { BlobStore } from "../blobs/blob-store.ts";
import { RejectedMessageError } from "../bus/event-bus.ts";
import { integer, type Env } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import type { DocumentRef } from "./progress.ts";

/** Kafka's own default message limit: events below it travel as they are. */
export const DEFAULT_STAGE_INLINE_MAX_BYTES = 1024 * 1024;

export function stageInlineMaxBytes(env: Env): number {
  return integer(env, "QUARRY_STAGE_INLINE_MAX_BYTES", DEFAULT_STAGE_INLINE_MAX_BYTES);
}

export class StagePayloads {
  constructor(
    private readonly blobs: BlobStore,
    /** Encoded events up to this size travel on the bus; larger ones by reference. */
    readonly inlineMaxBytes: number = DEFAULT_STAGE_INLINE_MAX_BYTES,
  ) {}

  /**
   * What goes on the bus for a stage's encoded output: the output itself when small enough, else
   * `reference(uri)` (the event with its identity and payload_uri only) once the whole is stored.
   */
  async claimCheck(doc: DocumentRef, topic: string, encoded: Uint8Array, reference: (uri: string) => Uint8Array): Promise<Uint8Array> {
    if (encoded.byteLength <= this.inlineMaxBytes) return encoded;
    const key = payloadKey(doc, topic);
    // Written again by a redelivery with the same bytes (outputs are keyed by version and step).
    await this.blobs.put(key, encoded);
    return reference(this.blobs.reference(key));
  }

  /** The whole encoded event a payload_uri names; refused when it lies outside this store's root. */
  read(uri: string): Promise<Uint8Array> {
    return this.blobs.read(this.blobs.keyOf(uri));
  }

  /** Every stored payload of the document's versions older than `doc.version` (a newer one is ready). */
  async dropSuperseded(doc: DocumentRef): Promise<void> {
    const prefix = documentPrefix(doc.knowledgeBaseId, doc.documentId);
    for (const key of await this.blobs.list(prefix)) {
      if (Number(key.slice(prefix.length).split(".")[0]) < doc.version) await this.blobs.delete(key);
    }
  }

  /** The stored payloads of one version (dropped as superseded, or the document deleted meanwhile). */
  async dropVersion(doc: DocumentRef): Promise<void> {
    const prefix = documentPrefix(doc.knowledgeBaseId, doc.documentId);
    for (const key of await this.blobs.list(prefix)) {
      if (key.slice(prefix.length).startsWith(`${doc.version}.`)) await this.blobs.delete(key);
    }
  }

  async dropDocument(knowledgeBaseId: string, documentId: string): Promise<void> {
    await this.blobs.deletePrefix(documentPrefix(knowledgeBaseId, documentId));
  }

  async dropKnowledgeBase(knowledgeBaseId: string): Promise<void> {
    await this.blobs.deletePrefix(`payloads/${safe(knowledgeBaseId)}/`);
  }
}

function payloadKey(doc: DocumentRef, topic: string): string {
  return `${documentPrefix(doc.knowledgeBaseId, doc.documentId)}${doc.version}.${topic}`;
}

function documentPrefix(knowledgeBaseId: string, documentId: string): string {
  return `payloads/${safe(knowledgeBaseId)}/${safe(documentId)}/`;
}

/** Ids come from events anyone on the bus may produce: a key is never built from an unchecked one. */
function safe(id: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new InvalidInputError(`not an id Quarry makes: ${JSON.stringify(id.slice(0, 200))}`);
  return id;
}

/**
 * The whole encoded event: `inline` (the message as it came) or, when the event carries a
 * payload_uri, the stored blob. A reference with no blob store to follow it is refused for good.
 */
export async function wholeEvent(payloads: StagePayloads | undefined, event: { payloadUri: string }, inline: Uint8Array): Promise<Uint8Array> {
  if (!event.payloadUri) return inline;
  if (!payloads) throw new RejectedMessageError(`the event's payload is at ${event.payloadUri}, and this stage has no blob store to read it from`);
  return payloads.read(event.payloadUri);
}
