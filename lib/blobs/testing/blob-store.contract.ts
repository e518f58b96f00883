// What every blob store does, run against each implementation (the folder and S3 on a real
// SeaweedFS): whole and streamed writes and reads, listing and deleting by folder, a missing key,
// and references: its own round-trip, any other is refused.
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../errors.ts";
import { BlobNotFoundError, RefusedReferenceError, type BlobStore } from "../blob-store.ts";

export interface BlobStoreUnderTest {
  store: BlobStore;
  cleanup(): Promise<void>;
}

async function collect(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts);
}

/** A stream in uneven pieces, so nothing can rely on one write being the whole blob. */
function pieces(bytes: Buffer, size: number): AsyncIterable<Uint8Array> {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return Readable.from(out);
}

export function describeBlobStoreContract(name: string, open: () => Promise<BlobStoreUnderTest>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let subject: BlobStoreUnderTest;
    let store: BlobStore;
    beforeAll(async () => {
      subject = await open();
      store = subject.store;
    });
    afterAll(async () => subject?.cleanup());

    it("reads back what it wrote, and a second write replaces the first whole", async () => {
      await store.put("originals/kb_a/doc_1", Buffer.from("first version"));
      expect(Buffer.from(await store.read("originals/kb_a/doc_1")).toString()).toBe("first version");
      await store.put("originals/kb_a/doc_1", Buffer.from("second"));
      expect(Buffer.from(await store.read("originals/kb_a/doc_1")).toString()).toBe("second");
    });

    it("writes a stream of unknown length and streams it back byte for byte", async () => {
      // Above 5 MiB, so an S3 store uploads it in parts.
      const bytes = randomBytes(6 * 1024 * 1024 + 123);
      await store.put("uploads/doc_big-1", pieces(bytes, 64 * 1024 + 7));
      const back = await collect(await store.open("uploads/doc_big-1"));
      expect(back.length).toBe(bytes.length);
      expect(back.equals(bytes)).toBe(true);
    });

    it("says a missing key is missing, on read and on open, and deleting one is no error", async () => {
      await expect(store.read("originals/kb_a/doc_none")).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.open("originals/kb_a/doc_none")).rejects.toBeInstanceOf(BlobNotFoundError);
      await store.delete("originals/kb_a/doc_none");
    });

    it("lists by folder and deletes a folder, leaving its neighbours", async () => {
      await store.put("list/kb_x/doc_1", Buffer.from("1"));
      await store.put("list/kb_x/doc_2", Buffer.from("2"));
      await store.put("list/kb_x2/doc_3", Buffer.from("3"));
      expect(await store.list("list/kb_x/")).toEqual(["list/kb_x/doc_1", "list/kb_x/doc_2"]);
      expect(await store.list("list/")).toEqual(["list/kb_x/doc_1", "list/kb_x/doc_2", "list/kb_x2/doc_3"]);
      await store.delete("list/kb_x/doc_1");
      expect(await store.list("list/kb_x/")).toEqual(["list/kb_x/doc_2"]);
      await store.deletePrefix("list/kb_x/");
      expect(await store.list("list/kb_x/")).toEqual([]);
      expect(await store.list("list/")).toEqual(["list/kb_x2/doc_3"]);
      await expect(store.read("list/kb_x/doc_2")).rejects.toBeInstanceOf(BlobNotFoundError);
      expect(await store.list("nothing-here/")).toEqual([]);
    });

    it("gives each key a reference under its root that names the key again", async () => {
      await store.put("refs/doc_r-17", Buffer.from("by reference"));
      const reference = store.reference("refs/doc_r-17");
      expect(reference.startsWith(store.root)).toBe(true);
      expect(store.keyOf(reference)).toBe("refs/doc_r-17");
      expect(Buffer.from(await store.read(store.keyOf(reference))).toString()).toBe("by reference");
    });

    it("refuses every reference outside its root", () => {
      const outside = [
        "file:///etc/passwd",
        `${store.root}../escape`,
        `${store.root}refs/../../escape`,
        `${store.root.slice(0, -1)}-sibling/doc`,
        "s3://another-bucket/refs/doc_r-17",
        "http://127.0.0.1:1/refs/doc_r-17",
        store.root,
      ];
      for (const reference of outside) expect(() => store.keyOf(reference), reference).toThrow(RefusedReferenceError);
    });

    it("refuses keys and prefixes Quarry never makes", async () => {
      for (const key of ["../escape", "a/../../b", ".hidden", "a//b", "/abs", ""]) {
        await expect(store.put(key, Buffer.from("x")), key).rejects.toBeInstanceOf(InvalidInputError);
      }
      await expect(store.list("no-slash")).rejects.toBeInstanceOf(InvalidInputError);
      await expect(store.deletePrefix("")).rejects.toThrow(/name a folder prefix/);
    });
  });
}
