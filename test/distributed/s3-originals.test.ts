// Originals in object storage: the gateway and the parser run as separate processes with separate
// data folders, so the S3 bucket (a real SeaweedFS) is the only thing they share. Every upload
// travels to the parser by an s3:// reference (QUARRY_INLINE_MAX_BYTES=1), its original is kept in
// the bucket and downloadable through the API, and deleting a document or a base deletes its
// originals there.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { S3BlobStore } from "../../lib/blobs/s3-blob-store.ts";
import { upload, watchAll } from "../e2e/e2e-helpers.ts";
import { fixtureBytes } from "../fixtures/fixture-documents.ts";
import { startDistributedQuarry, type DistributedQuarry } from "../support/distributed-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { describeWithAllEngines } from "./engines-all.ts";

describeWithAllEngines("originals in S3, the gateway and the parser sharing only the bucket", (engines) =>
  describeWithEngine("S3_ENDPOINT", "on S3", (endpoint) => {
    const bucket = process.env.S3_BUCKET ?? "quarry";
    const prefix = `e2e-originals-${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
    const credentials = { accessKeyId: process.env.S3_ACCESS_KEY_ID ?? "", secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? "" };
    // The test's own view of the bucket, to see what Quarry left there.
    const bucketView = new S3BlobStore({ bucket, prefix: `${prefix}/`, endpoint, region: "us-east-1", credentials, forcePathStyle: true });
    let quarry: DistributedQuarry;
    let gatewayDir = "";
    let parserDir = "";

    beforeAll(async () => {
      gatewayDir = await mkdtemp(join(tmpdir(), "quarry-s3-gateway-"));
      parserDir = await mkdtemp(join(tmpdir(), "quarry-s3-parser-"));
      quarry = await startDistributedQuarry({
        ...engines,
        env: { QUARRY_BLOB_URL: `s3://${bucket}/${prefix}`, S3_ENDPOINT: endpoint, S3_ACCESS_KEY_ID: credentials.accessKeyId, S3_SECRET_ACCESS_KEY: credentials.secretAccessKey },
        serviceEnv: { gateway: { QUARRY_DATA_DIR: gatewayDir, QUARRY_INLINE_MAX_BYTES: "1" }, parser: { QUARRY_DATA_DIR: parserDir } },
      });
    }, 240_000);

    afterAll(async () => {
      await quarry?.stop();
      await Promise.all((await bucketView.list("")).map((key) => bucketView.delete(key)));
      await rm(gatewayDir, { recursive: true, force: true });
      await rm(parserDir, { recursive: true, force: true });
    }, 60_000);

    const original = (documentId: string) => fetch(`${quarry.url}/v1/documents/${documentId}/original`);

    it("ingests uploads read from the bucket, keeps their originals there and serves them back byte for byte; a deleted document's original is gone", async () => {
      const kb = (await quarry.client.createKnowledgeBase({ name: `s3-${prefix}` })).knowledgeBase!.id;
      const files = { "company.md": await fixtureBytes("company.md"), "lighthouses.pdf": await fixtureBytes("lighthouses.pdf") };
      const ids = new Map<string, string>();
      for (const [name, bytes] of Object.entries(files)) ids.set(name, (await upload(quarry.client, kb, name, bytes)).document!.id);

      const log = await watchAll(quarry.client, [...ids.values()], 180_000);
      for (const [name, id] of ids) {
        const last = log.get(id)!.at(-1);
        expect(last?.status, `${name}: ${last?.error ?? quarry.logTail("parser")}`).toBe(DocumentStatus.READY);
      }
      // The events carried s3:// references: the versions waiting for the parser are in the bucket,
      // and neither process wrote a blob folder of its own.
      const keys = await bucketView.list("");
      for (const id of ids.values()) expect(keys.some((key) => key.startsWith(`${id}-`)), `no submitted blob of ${id} in ${keys.join(", ")}`).toBe(true);
      expect(existsSync(join(gatewayDir, "blobs"))).toBe(false);
      expect(existsSync(join(parserDir, "blobs"))).toBe(false);
      expect(await bucketView.list(`originals/${kb}/`)).toEqual([...ids.values()].map((id) => `originals/${kb}/${id}`).sort());

      for (const [name, bytes] of Object.entries(files)) {
        const response = await original(ids.get(name)!);
        expect(response.status).toBe(200);
        expect(response.headers.get("content-disposition")).toContain(encodeURIComponent(name));
        expect(Buffer.from(await response.arrayBuffer()).equals(bytes), `${name} came back changed`).toBe(true);
      }

      const pdf = ids.get("lighthouses.pdf")!;
      await quarry.client.deleteDocument({ documentId: pdf });
      expect(await bucketView.list(`originals/${kb}/`)).toEqual([`originals/${kb}/${ids.get("company.md")}`]);
      expect((await original(pdf)).status).toBe(404);
      // The other document's original is untouched.
      expect((await original(ids.get("company.md")!)).status).toBe(200);
    }, 240_000);

    it("deleting a knowledge base leaves nothing under its originals prefix", async () => {
      const kb = (await quarry.client.createKnowledgeBase({ name: `s3-gone-${prefix}` })).knowledgeBase!.id;
      const ids = [];
      for (const name of ["one.md", "two.md"]) ids.push((await upload(quarry.client, kb, name, Buffer.from(`# ${name}\n\nGranite is an igneous rock.\n`))).document!.id);
      const log = await watchAll(quarry.client, ids, 180_000);
      for (const id of ids) expect(log.get(id)!.at(-1)?.status).toBe(DocumentStatus.READY);
      expect((await bucketView.list(`originals/${kb}/`)).length).toBe(2);

      await quarry.client.deleteKnowledgeBase({ knowledgeBase: kb });
      expect(await bucketView.list(`originals/${kb}/`)).toEqual([]);
    }, 240_000);
  }),
);
