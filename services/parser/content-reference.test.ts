import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../lib/errors.ts";
import { readContentReference, RefusedReferenceError } from "./content-reference.ts";

const base = mkdtempSync(join(tmpdir(), "quarry-fileref-"));
const root = join(base, "root");
const outside = join(base, "outside");
mkdirSync(join(root, "sub"), { recursive: true });
mkdirSync(outside);
writeFileSync(join(root, "sub", "ok.txt"), "inside the root");
writeFileSync(join(outside, "secret.txt"), "outside the root");
symlinkSync("/etc/passwd", join(root, "passwd-link"));
symlinkSync(outside, join(root, "outside-dir-link"));
symlinkSync(join(root, "sub"), join(base, "into-root"));
execFileSync("mkfifo", [join(root, "fifo")]);
afterAll(() => rmSync(base, { recursive: true, force: true }));

const url = (p: string) => pathToFileURL(p).href;

describe("readContentReference", () => {
  it("reads a regular file under an allowed folder", async () => {
    expect(Buffer.from(await readContentReference(url(join(root, "sub", "ok.txt")), [root])).toString()).toBe("inside the root");
    // A path that only reaches the root through a symlink is judged by where it really is.
    expect(Buffer.from(await readContentReference(url(join(base, "into-root", "ok.txt")), [root])).toString()).toBe("inside the root");
  });

  it("refuses every reference when no folder is allowed", async () => {
    await expect(readContentReference(url(join(root, "sub", "ok.txt")), [])).rejects.toThrow(RefusedReferenceError);
    await expect(readContentReference("file:///etc/passwd", [])).rejects.toThrow(/file references are refused.*QUARRY_FILE_REF_ROOT/);
  });

  it("refuses paths outside the folder, by .., by symlink to a file or a folder, and whether or not they exist", async () => {
    const refused = [
      "file:///etc/passwd",
      url(join(outside, "secret.txt")),
      `file://${root}/sub/../../outside/secret.txt`,
      url(join(root, "passwd-link")),
      url(join(root, "outside-dir-link", "secret.txt")),
      url(join(outside, "does-not-exist.txt")),
    ];
    for (const uri of refused) await expect(readContentReference(uri, [root]), uri).rejects.toThrow(RefusedReferenceError);
    await expect(readContentReference(url(join(root, "passwd-link")), [root])).rejects.toThrow(/outside the allowed folders/);
  });

  it("refuses what is not a local file: other schemes, remote hosts, FIFOs; a missing file inside is an ordinary failure", async () => {
    for (const uri of ["https://example.com/a.pdf", "file://evil.example/etc/passwd", "/etc/passwd", url(join(root, "fifo"))]) {
      await expect(readContentReference(uri, [root]), uri).rejects.toThrow(RefusedReferenceError);
    }
    const missing = readContentReference(url(join(root, "sub", "gone.txt")), [root]);
    await expect(missing).rejects.toThrow(InvalidInputError);
    await expect(missing).rejects.not.toThrow(RefusedReferenceError);
  });
});
