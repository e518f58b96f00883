import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { describeWithEngine } from "../../test/support/engines.ts";
import { UnavailableError } from "../errors.ts";
import { S3BlobStore, type S3BlobStoreSettings } from "./s3-blob-store.ts";
import { describeBlobStoreContract } from "./testing/blob-store.contract.ts";

describeWithEngine("S3_ENDPOINT", "S3BlobStore", (endpoint) => {
  const settings = (prefix: string, secret = process.env.S3_SECRET_ACCESS_KEY ?? ""): S3BlobStoreSettings => ({
    bucket: process.env.S3_BUCKET ?? "quarry",
    prefix,
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: process.env.S3_ACCESS_KEY_ID ?? "", secretAccessKey: secret },
    forcePathStyle: true,
  });
  // Each run under its own prefix of the shared bucket, removed afterwards.
  const run = `blob-contract-${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;

  describeBlobStoreContract("S3 (SeaweedFS)", async () => {
    const store = new S3BlobStore(settings(`${run}/`));
    return { store, cleanup: async () => Promise.all((await store.list("")).map((key) => store.delete(key))).then(() => {}) };
  });

  it("is refused by the store with a wrong secret: requests are really signed", async () => {
    const store = new S3BlobStore(settings(`${run}-denied/`, "not-the-secret"));
    const refusal = store.put("doc_1", Buffer.from("x"));
    await expect(refusal).rejects.toBeInstanceOf(UnavailableError);
    await expect(refusal).rejects.toThrow(/SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId/);
  });
});
