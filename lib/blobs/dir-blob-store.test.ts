import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { DirBlobStore } from "./dir-blob-store.ts";
import { describeBlobStoreContract } from "./testing/blob-store.contract.ts";

describeBlobStoreContract("folder", async () => {
  const dir = await mkdtemp(join(tmpdir(), "quarry-blobs-"));
  return { store: new DirBlobStore(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

it("leaves no temporary file behind a write whose stream failed, and keeps the old blob", async () => {
  const dir = await mkdtemp(join(tmpdir(), "quarry-blobs-"));
  try {
    const store = new DirBlobStore(dir);
    await store.put("originals/kb_1/doc_1", Buffer.from("kept"));
    async function* failing() {
      yield Buffer.from("half");
      throw new Error("the client went away");
    }
    await expect(store.put("originals/kb_1/doc_1", failing())).rejects.toThrow("the client went away");
    expect(Buffer.from(await store.read("originals/kb_1/doc_1")).toString()).toBe("kept");
    expect(await readdir(join(dir, "originals", "kb_1"))).toEqual(["doc_1"]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
