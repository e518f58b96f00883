// The blob store in an S3 bucket (QUARRY_BLOB_URL=s3://bucket/prefix): AWS S3, or any store that
// speaks its API (SeaweedFS, MinIO, Ceph) at S3_ENDPOINT, addressed path-style there. The one module
// that knows the SDK. A PUT is whole by S3's own rule (readers see the old object or the new), so
// no temporary name is needed; a stream of unknown length goes up in parts (lib-storage's Upload).
import { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { UnavailableError } from "../errors.ts";
import { BlobNotFoundError, checkKey, checkPrefix, isKey, RefusedReferenceError, type BlobBody, type BlobStore } from "./blob-store.ts";

export interface S3BlobStoreSettings {
  bucket: string;
  /** Keys live under this folder of the bucket ("" or "quarry/originals/"). */
  prefix: string;
  /** An S3-compatible endpoint (http://127.0.0.1:8333); absent: AWS S3 of the region. */
  endpoint?: string;
  region: string;
  /** Absent: the SDK's own chain (AWS_* variables, profiles, instance roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** bucket in the path (http://host/bucket/key), as S3-compatible stores expect, not in the host name. */
  forcePathStyle: boolean;
}

// DeleteObjects takes at most this many keys a request.
const DELETE_BATCH = 1000;

export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  readonly root: string;

  constructor(private readonly settings: S3BlobStoreSettings) {
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials: settings.credentials,
      // Checksums only where S3 requires them: stores other than AWS accept the classic ones but not
      // always the SDK's newer default (CRC32 trailers on every request).
      ...(settings.endpoint ? { requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED" } : {}),
    });
    this.root = `s3://${settings.bucket}/${settings.prefix}`;
  }

  private objectKey(key: string): string {
    return this.settings.prefix + checkKey(key);
  }

  async put(key: string, body: BlobBody): Promise<void> {
    const Key = this.objectKey(key);
    await this.call(`write ${key}`, async () => {
      if (body instanceof Uint8Array) {
        await this.client.send(new PutObjectCommand({ Bucket: this.settings.bucket, Key, Body: body, ContentLength: body.byteLength }));
      } else {
        await new Upload({ client: this.client, params: { Bucket: this.settings.bucket, Key, Body: Readable.from(body) } }).done();
      }
    });
  }

  async read(key: string): Promise<Uint8Array> {
    const body = await this.open(key);
    const parts: Uint8Array[] = [];
    for await (const part of body) parts.push(part);
    return Buffer.concat(parts);
  }

  async open(key: string): Promise<AsyncIterable<Uint8Array>> {
    const response = await this.call(`read ${key}`, () => this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) })), key);
    // In Node the body is an http.IncomingMessage: a Readable, read as it arrives.
    return response.Body as Readable;
  }

  async delete(key: string): Promise<void> {
    await this.call(`delete ${key}`, () => this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) })));
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const objectKey of this.objectKeys(checkPrefix(prefix))) {
      const key = objectKey.slice(this.settings.prefix.length);
      if (isKey(key)) keys.push(key);
    }
    return keys.sort();
  }

  async deletePrefix(prefix: string): Promise<void> {
    if (checkPrefix(prefix) === "") throw new Error("refusing to delete every blob: name a folder prefix");
    let batch: string[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const Objects = batch.map((Key) => ({ Key }));
      batch = [];
      const result = await this.call(`delete ${prefix}`, () =>
        this.client.send(new DeleteObjectsCommand({ Bucket: this.settings.bucket, Delete: { Objects, Quiet: true } })),
      );
      const failed = result.Errors ?? [];
      if (failed.length > 0) throw new UnavailableError(`S3 could not delete ${failed.length} object(s) under ${this.root}${prefix}: ${failed[0]!.Key}: ${failed[0]!.Message}`);
    };
    for await (const objectKey of this.objectKeys(prefix)) {
      batch.push(objectKey);
      if (batch.length === DELETE_BATCH) await flush();
    }
    await flush();
  }

  reference(key: string): string {
    return `s3://${this.settings.bucket}/${this.objectKey(key)}`;
  }

  keyOf(reference: string): string {
    const refused = () => new RefusedReferenceError(`reference refused: ${JSON.stringify(reference.slice(0, 200))} is not under ${this.root}`);
    const head = `s3://${this.settings.bucket}/${this.settings.prefix}`;
    if (!reference.startsWith(head)) throw refused();
    // Judged on the key as written: S3 keys are literal, but "a/../b" is no key Quarry makes.
    const key = reference.slice(head.length);
    if (!isKey(key)) throw refused();
    return key;
  }

  private async *objectKeys(prefix: string): AsyncIterable<string> {
    let ContinuationToken: string | undefined;
    do {
      const page = await this.call(`list ${prefix}`, () =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.settings.bucket, Prefix: this.settings.prefix + prefix, ContinuationToken })),
      );
      for (const object of page.Contents ?? []) if (object.Key) yield object.Key;
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  /** One SDK call, its failure said in Quarry's terms: a missing key is BlobNotFoundError, the rest names the store. */
  private async call<T>(what: string, attempt: () => Promise<T>, key?: string): Promise<T> {
    try {
      return await attempt();
    } catch (error) {
      if (key !== undefined && (error instanceof NoSuchKey || (error as { name?: string }).name === "NoSuchKey")) {
        throw new BlobNotFoundError(`no blob ${key} in ${this.root}`, { cause: error });
      }
      const detail = error instanceof S3ServiceException ? `${error.name}: ${error.message}` : (error as Error).message;
      throw new UnavailableError(`S3 could not ${what} in ${this.root}${this.settings.endpoint ? ` at ${this.settings.endpoint}` : ""}: ${detail}`, { cause: error });
    }
  }
}
