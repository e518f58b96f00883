// Picks the blob store: S3 when QUARRY_BLOB_URL is an s3:// address, else the blob folder.
import { blobDir, ConfigError, optional, optionalUrl, type Env } from "../config.ts";
import type { BlobStore } from "./blob-store.ts";
import { DirBlobStore } from "./dir-blob-store.ts";

/** s3://bucket/prefix → the bucket and the key prefix ("" or ending in "/"). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match) throw new ConfigError(`QUARRY_BLOB_URL must be s3://bucket or s3://bucket/prefix (a lower-case S3 bucket name), not "${url}"`);
  const path = (match[2] ?? "").replace(/\/+$/, "");
  if (path !== "" && !path.split("/").every((segment) => /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(segment))) {
    throw new ConfigError(`QUARRY_BLOB_URL's prefix must be plain folder names (letters, digits, _ . -), not "${path}"`);
  }
  return { bucket: match[1]!, prefix: path === "" ? "" : `${path}/` };
}

export async function openBlobStore(env: Env): Promise<BlobStore> {
  const url = optional(env, "QUARRY_BLOB_URL");
  if (url === undefined) return new DirBlobStore(blobDir(env));
  const { bucket, prefix } = parseS3Url(url);
  const endpoint = optionalUrl(env, "S3_ENDPOINT", "http://127.0.0.1:8333");
  const accessKeyId = optional(env, "S3_ACCESS_KEY_ID");
  const secretAccessKey = optional(env, "S3_SECRET_ACCESS_KEY");
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) throw new ConfigError("S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together, or neither (the SDK's own credentials)");
  const pathStyle = optional(env, "QUARRY_S3_PATH_STYLE");
  if (pathStyle !== undefined && pathStyle !== "0" && pathStyle !== "1") throw new ConfigError(`QUARRY_S3_PATH_STYLE must be 0 or 1, not "${pathStyle}"`);
  const { S3BlobStore } = await import("./s3-blob-store.ts");
  return new S3BlobStore({
    bucket,
    prefix,
    endpoint,
    region: optional(env, "S3_REGION") ?? "us-east-1",
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
    // An S3-compatible store at its own address takes the bucket in the path; AWS wants it in the host.
    forcePathStyle: pathStyle === undefined ? endpoint !== undefined : pathStyle === "1",
  });
}
