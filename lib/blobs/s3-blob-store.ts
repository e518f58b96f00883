// The blob store in an S3 bucket (QUARRY_BLOB_URL=s3://bucket/prefix): AWS S3, or any store that
// speaks its API (SeaweedFS, MinIO, Ceph) at S3_ENDPOINT, addressed path-style there. The SDK itself
// is lib/s3/s3-bucket.ts's; this module maps blob keys to object keys under the prefix. A PUT is
// whole by S3's own rule (readers see the old object or the new), so no temporary name is needed.
import { S3Bucket, S3KeyNotFoundError, DELETE_BATCH, type S3Connection } from "../s3/s3-bucket.ts";
import { BlobNotFoundError, checkKey, checkPrefix, isKey, RefusedReferenceError, type BlobBody, type BlobStore } from "./blob-store.ts";

export interface S3BlobStoreSettings extends S3Connection {
  /** Keys live under this folder of the bucket ("" or "quarry/originals/"). */
  prefix: string;
}

export class S3BlobStore implements BlobStore {
  private readonly bucket: S3Bucket;
  readonly root: string;

  constructor(private readonly settings: S3BlobStoreSettings) {
    this.bucket = new S3Bucket(settings);
    this.root = `s3://${settings.bucket}/${settings.prefix}`;
  }

  private objectKey(key: string): string {
    return this.settings.prefix + checkKey(key);
  }

  async put(key: string, body: BlobBody): Promise<void> {
    await this.bucket.put(this.objectKey(key), body);
  }

  async read(key: string): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for await (const part of await this.open(key)) parts.push(part);
    return Buffer.concat(parts);
  }

  async open(key: string): Promise<AsyncIterable<Uint8Array>> {
    try {
      return await this.bucket.open(this.objectKey(key));
    } catch (error) {
      if (error instanceof S3KeyNotFoundError) throw new BlobNotFoundError(`no blob ${key} in ${this.root}`, { cause: error });
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.bucket.delete(this.objectKey(key));
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const object of this.bucket.list(this.settings.prefix + checkPrefix(prefix))) {
      const key = object.key.slice(this.settings.prefix.length);
      if (isKey(key)) keys.push(key);
    }
    return keys.sort();
  }

  async deletePrefix(prefix: string): Promise<void> {
    if (checkPrefix(prefix) === "") throw new Error("refusing to delete every blob: name a folder prefix");
    let batch: string[] = [];
    for await (const object of this.bucket.list(this.settings.prefix + prefix)) {
      batch.push(object.key);
      if (batch.length === DELETE_BATCH) {
        await this.bucket.deleteMany(batch, `delete ${prefix}`);
        batch = [];
      }
    }
    await this.bucket.deleteMany(batch, `delete ${prefix}`);
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
}
