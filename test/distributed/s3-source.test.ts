// An S3 bucket source on a real SeaweedFS (S3_ENDPOINT), kept in sync by embedded Quarry: the test
// mutates its own prefix of the bucket between syncs — add, edit, rename (the same bytes under a new
// key), delete, an object replaced by one of another type — and after each sync the base holds
// exactly the current content, found by search; embedder calls are counted at the OpenAI-compatible
// embedding stub Quarry embeds through, so a renamed object is seen re-pointed, not re-embedded.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SourceSyncState } from "../../gen/quarry/common/v1/source_pb.ts";
import { S3Bucket } from "../../lib/s3/s3-bucket.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { sourceSyncKit } from "../support/source-sync-kit.ts";

describeWithEngine("S3_ENDPOINT", "an S3 bucket source on SeaweedFS", (endpoint) => {
  const bucketName = process.env.S3_BUCKET ?? "quarry";
  const accessKeyId = process.env.S3_ACCESS_KEY_ID ?? "";
  const secretAccessKey = process.env.S3_SECRET_ACCESS_KEY ?? "";
  // This run's own folder of the shared bucket, emptied afterwards.
  const prefix = `source-e2e-${Date.now().toString(36)}${randomBytes(3).toString("hex")}/`;
  const bucket = new S3Bucket({ bucket: bucketName, endpoint, region: "us-east-1", credentials: { accessKeyId, secretAccessKey }, forcePathStyle: true });
  const put = (key: string, text: string) => bucket.put(prefix + key, Buffer.from(text));
  let quarry: EmbeddedQuarryFixture;
  let embeddings: OpenAiStub;
  const { sync, holding } = sourceSyncKit(() => quarry.client, () => embeddings);

  beforeAll(async () => {
    embeddings = await startOpenAiStub({ embeddingDimension: 64 });
    quarry = await startEmbeddedQuarry({
      env: { QUARRY_EMBEDDING_PROVIDER: "openai", QUARRY_EMBEDDING_BASE_URL: embeddings.url, QUARRY_EMBEDDING_MODEL: "stub-embedding", QUARRY_EMBEDDING_DIMENSION: "64" },
    });
  }, 120_000);

  afterAll(async () => {
    await quarry?.stop();
    await embeddings?.close();
    const keys: string[] = [];
    for await (const object of bucket.list(prefix)) keys.push(object.key);
    await bucket.deleteMany(keys, `clean up ${prefix}`);
  });

  it("keeps a base equal to a bucket prefix through adds, edits, a rename, deletes and a change of type", async () => {
    const client = quarry.client;
    const kb = `s3-${randomBytes(3).toString("hex")}`;
    await client.createKnowledgeBase({ name: kb });
    await put("alpha.md", "# Alpha\n\nThe alpha notes mention S3ALPHAONE in passing.\n");
    await put("bravo.txt", "Bravo keeps the S3BRAVOONE ledger for the harbour office.\n");
    await put("sub/charlie.txt", "Charlie wrote S3CHARLIEONE on the tunnel map.\n");
    await put("report.txt", "The plain report says S3REPORTTXT about the quarry.\n");
    await put("noise.log", "S3LOGNOISE should never be ingested.\n");
    // Outside the source's prefix: never listed.
    await bucket.put(`${prefix.slice(0, -1)}-other/outside.txt`, Buffer.from("S3OUTSIDE is under another prefix.\n"));

    const { source } = await client.addSource({
      knowledgeBase: kb,
      source: {
        name: "bucket",
        kind: { case: "s3", value: { endpoint, bucket: bucketName, prefix, pathStyle: true, exclude: ["**/*.log"], accessKeyId, secretAccessKey } },
        tags: { store: "seaweedfs" },
      },
    });
    // The secret is stored, never handed back.
    expect(source!.kind.case === "s3" && source!.kind.value).toMatchObject({ accessKeyId, secretAccessKey: "", secretAccessKeySet: true });
    const listed = (await client.listSources({ knowledgeBase: kb })).sources[0]!;
    expect(listed.kind.case === "s3" && listed.kind.value).toMatchObject({ secretAccessKey: "", secretAccessKeySet: true });

    const first = await sync(kb, "bucket");
    expect(first.sync).toMatchObject({ state: SourceSyncState.DONE, listed: 4, submitted: 4, added: 4, changed: 0, removed: 0, moved: 0, unchanged: 0, failed: 0 });
    expect(await holding(kb, "S3ALPHAONE")).toEqual(["alpha.md"]);
    expect(await holding(kb, "S3CHARLIEONE", { store: "seaweedfs", source_path: "sub/charlie.txt" })).toEqual(["sub/charlie.txt"]);
    expect(await holding(kb, "S3LOGNOISE")).toEqual([]);
    expect(await holding(kb, "S3OUTSIDE")).toEqual([]);

    // Edit, rename (S3 has none: the same bytes put under a new key, the old one deleted), delete,
    // add, and an object replaced by one of another type.
    await put("alpha.md", "# Alpha\n\nThe alpha notes now say S3ALPHATWO instead.\n");
    await put("moved/bravo.txt", "Bravo keeps the S3BRAVOONE ledger for the harbour office.\n");
    await bucket.delete(`${prefix}bravo.txt`);
    await bucket.delete(`${prefix}sub/charlie.txt`);
    await put("delta.txt", "Delta brings S3DELTAONE to the archive.\n");
    await bucket.delete(`${prefix}report.txt`);
    await put("report.html", "<html><body><h1>Report</h1><p>The page report says S3REPORTHTML now.</p></body></html>");

    const second = await sync(kb, "bucket");
    expect(second.sync).toMatchObject({ state: SourceSyncState.DONE, added: 2, changed: 1, removed: 2, moved: 1, unchanged: 0, failed: 0 });
    // The renamed object was re-pointed, not embedded again; the edited one was.
    expect(second.embedded.some((text) => text.includes("S3BRAVOONE"))).toBe(false);
    expect(second.embedded.some((text) => text.includes("S3ALPHATWO"))).toBe(true);
    expect(await holding(kb, "S3ALPHAONE")).toEqual([]);
    expect(await holding(kb, "S3ALPHATWO")).toEqual(["alpha.md"]);
    expect(await holding(kb, "S3CHARLIEONE")).toEqual([]);
    expect(await holding(kb, "S3DELTAONE")).toEqual(["delta.txt"]);
    expect(await holding(kb, "S3REPORTTXT")).toEqual([]);
    expect(await holding(kb, "S3REPORTHTML")).toEqual(["report.html"]);
    expect(await holding(kb, "S3BRAVOONE", { source_path: "moved/bravo.txt" })).toEqual(["bravo.txt"]);
    expect(await holding(kb, "S3BRAVOONE", { source_path: "bravo.txt" })).toEqual([]);
    const documents = (await client.listDocuments({ knowledgeBase: kb })).documents;
    expect(documents.map((d) => d.fileName).sort()).toEqual(["alpha.md", "bravo.txt", "delta.txt", "report.html"]);
    expect(documents.every((d) => d.metadata.source_id === source!.id && d.metadata.store === "seaweedfs" && d.metadata.source_modified)).toBe(true);

    // Nothing changed: the listing's ETags say so, and nothing is read, submitted or embedded.
    const third = await sync(kb, "bucket");
    expect(third.sync).toMatchObject({ state: SourceSyncState.DONE, listed: 4, submitted: 0, added: 0, changed: 0, removed: 0, moved: 0, unchanged: 4, failed: 0 });
    expect(third.embedded).toEqual([]);
  });

  it("fails a sync with the store's reason when the secret is wrong, and changes nothing", async () => {
    const client = quarry.client;
    const kb = `s3-denied-${randomBytes(3).toString("hex")}`;
    await client.createKnowledgeBase({ name: kb });
    await put("denied/one.txt", "S3DENIED must not be read.\n");
    await client.addSource({
      knowledgeBase: kb,
      source: { name: "wrong", kind: { case: "s3", value: { endpoint, bucket: bucketName, prefix: `${prefix}denied/`, pathStyle: true, accessKeyId, secretAccessKey: "not-the-secret" } } },
    });
    const { sync: failed } = await sync(kb, "wrong");
    expect(failed.state).toBe(SourceSyncState.FAILED);
    expect(failed.error).toMatch(/S3 could not list .*(SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId)/);
    expect((await client.listDocuments({ knowledgeBase: kb })).documents).toEqual([]);
  });
});
