import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../lib/errors.ts";
import { checkS3Settings, type S3Settings } from "./s3-lister.ts";

const settings = (change: Partial<S3Settings>): S3Settings => ({
  endpoint: "http://127.0.0.1:8333",
  region: "",
  bucket: "reports",
  prefix: "2024/",
  pathStyle: true,
  include: [],
  exclude: [],
  accessKeyId: "",
  secretAccessKey: "",
  ...change,
});

describe("checkS3Settings", () => {
  it("takes a bucket with or without a key pair and an endpoint", () => {
    expect(() => checkS3Settings(settings({}))).not.toThrow();
    expect(() => checkS3Settings(settings({ endpoint: "", accessKeyId: "AKIA", secretAccessKey: "s" }))).not.toThrow();
  });

  it.each([
    [{ bucket: "" }, /bucket name of 3 to 63/],
    [{ bucket: "Upper_Case" }, /not "Upper_Case"/],
    [{ endpoint: "not a url" }, /"not a url" is not a URL/],
    [{ endpoint: "ftp://store/" }, /must be an http or https URL/],
    [{ accessKeyId: "AKIA" }, /an access key id and its secret together, or neither/],
    [{ secretAccessKey: "s" }, /an access key id and its secret together, or neither/],
  ])("refuses %o with the reason", (change, reason) => {
    expect(() => checkS3Settings(settings(change))).toThrow(InvalidInputError);
    expect(() => checkS3Settings(settings(change))).toThrow(reason);
  });
});
