// One bucket of an S3-compatible store (AWS S3, SeaweedFS, MinIO, Ceph), in Quarry's terms: the one
// module that knows the AWS SDK. The blob store (lib/blobs/s3-blob-store.ts) and the S3 bucket source
// (gateway/sources/s3-lister.ts) both go through it, so the client's settings and the way a failure
// is said live in one place. Keys here are the bucket's own, whole; prefixes are the callers'.
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
import { NotFoundError, UnavailableError } from "../errors.ts";

export interface S3Connection {
  bucket: string;
  /** An S3-compatible endpoint (http://127.0.0.1:8333); absent: AWS S3 of the region. */
  endpoint?: string;
  region: string;
  /** Absent: the SDK's own chain (AWS_* variables, profiles, instance roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** bucket in the path (http://host/bucket/key), as S3-compatible stores expect, not in the host name. */
  forcePathStyle: boolean;
}

/** One object as a listing shows it. */
export interface S3Object {
  key: string;
  /** As the store sends it, without the quotes: an MD5 for a plain upload, else a digest of the parts. */
  etag: string;
  size: number;
  lastModified?: Date;
}

/** No object under that key. */
export class S3KeyNotFoundError extends NotFoundError {}

// DeleteObjects takes at most this many keys a request.
export const DELETE_BATCH = 1000;

export class S3Bucket {
  private readonly client: S3Client;
  /** s3://bucket (at endpoint), for messages. */
  readonly where: string;

  constructor(readonly connection: S3Connection) {
    this.client = new S3Client({
      region: connection.region,
      endpoint: connection.endpoint,
      forcePathStyle: connection.forcePathStyle,
      credentials: connection.credentials,
      // Checksums only where S3 requires them: stores other than AWS accept the classic ones but not
      // always the SDK's newer default (CRC32 trailers on every request).
      ...(connection.endpoint ? { requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED" } : {}),
    });
    this.where = `s3://${connection.bucket}${connection.endpoint ? ` at ${connection.endpoint}` : ""}`;
  }

  /** Every object under the prefix, in the store's (key) order, page by page. */
  async *list(prefix: string): AsyncIterable<S3Object> {
    let ContinuationToken: string | undefined;
    do {
      const page = await this.call(`list ${prefix || "the bucket"}`, () =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.connection.bucket, Prefix: prefix, ContinuationToken })),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield { key: object.Key, etag: (object.ETag ?? "").replace(/"/g, ""), size: Number(object.Size ?? 0), lastModified: object.LastModified };
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  /** The object as a stream, opened (so a missing one is S3KeyNotFoundError here, not mid-stream). */
  async open(key: string): Promise<AsyncIterable<Uint8Array>> {
    const response = await this.call(`read ${key}`, () => this.client.send(new GetObjectCommand({ Bucket: this.connection.bucket, Key: key })), key);
    // In Node the body is an http.IncomingMessage: a Readable, read as it arrives.
    return response.Body as Readable;
  }

  async read(key: string): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for await (const part of await this.open(key)) parts.push(part);
    return Buffer.concat(parts);
  }

  /** A PUT is whole by S3's own rule (readers see the old object or the new); a stream of unknown length goes up in parts. */
  async put(key: string, body: Uint8Array | AsyncIterable<Uint8Array>): Promise<void> {
    await this.call(`write ${key}`, async () => {
      if (body instanceof Uint8Array) {
        await this.client.send(new PutObjectCommand({ Bucket: this.connection.bucket, Key: key, Body: body, ContentLength: body.byteLength }));
      } else {
        await new Upload({ client: this.client, params: { Bucket: this.connection.bucket, Key: key, Body: Readable.from(body) } }).done();
      }
    });
  }

  /** One that is not there is no error. */
  async delete(key: string): Promise<void> {
    await this.call(`delete ${key}`, () => this.client.send(new DeleteObjectCommand({ Bucket: this.connection.bucket, Key: key })));
  }

  /** At most DELETE_BATCH keys in one request; throws naming the first key the store kept. */
  async deleteMany(keys: string[], what: string): Promise<void> {
    if (keys.length === 0) return;
    const result = await this.call(what, () =>
      this.client.send(new DeleteObjectsCommand({ Bucket: this.connection.bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } })),
    );
    const failed = result.Errors ?? [];
    if (failed.length > 0) throw new UnavailableError(`S3 could not ${what} in ${this.where}: ${failed.length} object(s) kept, ${failed[0]!.Key}: ${failed[0]!.Message}`);
  }

  /** One SDK call, its failure said in Quarry's terms: a missing key is S3KeyNotFoundError, the rest names the store. */
  private async call<T>(what: string, attempt: () => Promise<T>, key?: string): Promise<T> {
    try {
      return await attempt();
    } catch (error) {
      if (key !== undefined && (error instanceof NoSuchKey || (error as { name?: string }).name === "NoSuchKey")) {
        throw new S3KeyNotFoundError(`no object ${key} in ${this.where}`, { cause: error });
      }
      const detail = error instanceof S3ServiceException ? `${error.name}: ${error.message}` : (error as Error).message;
      throw new UnavailableError(`S3 could not ${what} in ${this.where}: ${detail}`, { cause: error });
    }
  }
}
