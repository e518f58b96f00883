// An S3 bucket source: every object under the prefix of a bucket in any S3-compatible store whose key
// after the prefix matches the include globs and none of the exclude globs. The change token is the
// object's ETag and size, both in the listing, so an unchanged bucket costs its list requests and no
// object is read; a renamed object (S3 has no rename: a copy and a delete) is found as a move by the
// sync, from its bytes. The SDK is loaded only when an S3 source is listed.
import type { S3Source } from "../../gen/quarry/common/v1/source_pb.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import type { Listing, SourceLister } from "./lister.ts";
import { pathFilter } from "./path-filter.ts";

/** The source's settings as the contract gives them (secret_access_key_set is only ever an answer's). */
export type S3Settings = Omit<S3Source, "$typeName" | "$unknown" | "secretAccessKeySet">;

const DEFAULT_REGION = "us-east-1";

export function checkS3Settings(settings: S3Settings): void {
  // S3's rule for bucket names (lower case, 3–63 characters), which S3-compatible stores follow too.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(settings.bucket)) {
    throw new InvalidInputError(`an S3 source needs a bucket name of 3 to 63 lower-case letters, digits, dots and hyphens, not "${settings.bucket}"`);
  }
  if (settings.endpoint) {
    let url: URL;
    try {
      url = new URL(settings.endpoint);
    } catch {
      throw new InvalidInputError(`the S3 endpoint "${settings.endpoint}" is not a URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidInputError(`the S3 endpoint ${settings.endpoint} must be an http or https URL`);
  }
  if (Boolean(settings.accessKeyId) !== Boolean(settings.secretAccessKey)) {
    throw new InvalidInputError("an S3 source takes an access key id and its secret together, or neither (then the gateway's own AWS credentials)");
  }
}

export class S3Lister implements SourceLister {
  constructor(private readonly settings: S3Settings) {}

  async *list(): AsyncIterable<Listing> {
    const { S3Bucket } = await import("../../lib/s3/s3-bucket.ts");
    const { settings } = this;
    const bucket = new S3Bucket({
      bucket: settings.bucket,
      endpoint: settings.endpoint || undefined,
      region: settings.region || DEFAULT_REGION,
      credentials: settings.accessKeyId ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } : undefined,
      forcePathStyle: settings.pathStyle,
    });
    const filter = pathFilter(settings.include, settings.exclude);
    for await (const object of bucket.list(settings.prefix)) {
      // A key ending in "/" is a folder marker some tools write, not a document.
      if (object.key.endsWith("/")) continue;
      const path = object.key.slice(settings.prefix.length).replace(/^\/+/, "");
      if (!path || !filter.takes(path)) continue;
      yield {
        item: {
          id: path,
          name: path,
          changeToken: `${object.etag}:${object.size}`,
          mimeType: "",
          modifiedAt: object.lastModified,
          read: () => bucket.read(object.key),
        },
      };
    }
  }
}
