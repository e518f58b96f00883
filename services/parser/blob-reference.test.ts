// content_uri references into the blob store (s3://), read by the parser from a real S3 (SeaweedFS):
// one under the store's root is read, any other is refused before a request is made, and one that
// names no object fails the document with the reason rather than being retried.
import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import { describeWithEngine } from "../../test/support/engines.ts";
import { S3BlobStore } from "../../lib/blobs/s3-blob-store.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import { readReferencedContent, RefusedReferenceError } from "./content-reference.ts";

describeWithEngine("S3_ENDPOINT", "readReferencedContent from S3", (endpoint) => {
  const bucket = process.env.S3_BUCKET ?? "quarry";
  const prefix = `parser-refs-${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const store = new S3BlobStore({
    bucket,
    prefix: `${prefix}/`,
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: process.env.S3_ACCESS_KEY_ID ?? "", secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? "" },
    forcePathStyle: true,
  });
  afterAll(async () => Promise.all((await store.list("")).map((key) => store.delete(key))));

  it("reads a reference under the store's root", async () => {
    await store.put("doc_1-1", Buffer.from("from the bucket"));
    expect(Buffer.from(await readReferencedContent(store.reference("doc_1-1"), [], store)).toString()).toBe("from the bucket");
  });

  it("refuses references elsewhere in the bucket, in another bucket, or climbing out", async () => {
    for (const uri of [`s3://${bucket}/elsewhere/doc_1-1`, `s3://other-${bucket}/${prefix}/doc_1-1`, `s3://${bucket}/${prefix}/../elsewhere/doc_1-1`, "https://example.org/doc"]) {
      await expect(readReferencedContent(uri, [], store), uri).rejects.toBeInstanceOf(RefusedReferenceError);
    }
    // A file reference is judged by the folder rules: no folder allowed, none read.
    await expect(readReferencedContent("file:///etc/passwd", [], store)).rejects.toBeInstanceOf(RefusedReferenceError);
  });

  it("fails a reference that names no object, saying so", async () => {
    const missing = readReferencedContent(store.reference("doc_gone-1"), [], store);
    await expect(missing).rejects.toBeInstanceOf(InvalidInputError);
    await expect(missing).rejects.toThrow(/no such object/);
  });
});
