// Errors cross services by code and reason, never by their words: a reason set where an error is
// thrown arrives, through a real Connect round trip, on the domain error the caller sees; and no
// code anywhere decides by matching an error's message (but a library's, which tells nothing else).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus, HealthCheckResponseSchema } from "../../gen/grpc/health/v1/health_pb.ts";
import { ErrorReasons, FailedPreconditionError, hasReason, NotFoundError, QuarryError } from "../errors.ts";
import { reasonOf, toConnectError, toDomainError } from "./error-mapping.ts";

describe("error reasons across a service boundary", () => {
  it("carries a thrown error's reason to the caller's domain error through a real Connect round trip", async () => {
    let thrown: Error = new Error("unset");
    const transport = createRouterTransport(({ service }) => {
      service(Health, {
        check: () => {
          throw toConnectError(thrown);
        },
        watch: async function* () {
          yield create(HealthCheckResponseSchema, { status: HealthCheckResponse_ServingStatus.SERVING });
        },
      });
    });
    const client = createClient(Health, transport);
    const callerSees = () => client.check({}).then(() => undefined, toDomainError);

    thrown = new FailedPreconditionError("query vector has 3 dimensions; knowledge base kb_1 stores 4", { reason: ErrorReasons.staleQueryVector });
    const stale = await callerSees();
    expect(stale).toBeInstanceOf(FailedPreconditionError);
    expect(hasReason(stale, ErrorReasons.staleQueryVector)).toBe(true);
    expect((stale as QuarryError).message).toBe("query vector has 3 dimensions; knowledge base kb_1 stores 4");

    // The same code without the reason is another failure, whatever its words say.
    thrown = new FailedPreconditionError("query vector has 3 dimensions; knowledge base kb_1 stores 4");
    const plain = await callerSees();
    expect(plain).toBeInstanceOf(FailedPreconditionError);
    expect(hasReason(plain, ErrorReasons.staleQueryVector)).toBe(false);
    expect((plain as QuarryError).reason).toBeUndefined();

    thrown = new NotFoundError("no such model", { reason: ErrorReasons.modelNotFound });
    expect(hasReason(await callerSees(), ErrorReasons.modelNotFound)).toBe(true);
  });

  it("puts the reason on the Connect error a surface reads, and none on an error without one", () => {
    expect(reasonOf(toConnectError(new NotFoundError("x", { reason: ErrorReasons.modelNotFound })))).toBe(ErrorReasons.modelNotFound);
    expect(reasonOf(toConnectError(new NotFoundError("x")))).toBeUndefined();
    expect(reasonOf(new ConnectError("x", Code.NotFound))).toBeUndefined();
  });
});

const ROOT = join(import.meta.dirname, "..", "..");
const SOURCE_FOLDERS = ["app", "bench", "cli", "client", "console/src", "eval", "gateway", "lib", "services"];
// `/…/.test(x.message)`, `x.message.includes(…)` and the like, on any error's message.
const MESSAGE_MATCH = /\.test\([^)]*\.(rawMessage|message)\)|\.(rawMessage|message)\.(includes|startsWith|endsWith|match)\(/;
const LIBRARY_MARK = "a library's error";

function sources(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (name === "node_modules" || name === "dist") return [];
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [path] : [];
  });
}

describe("no decision by an error's words", () => {
  it("finds no code matching an error message, except a library's error marked as such", () => {
    const found: string[] = [];
    for (const file of SOURCE_FOLDERS.flatMap((folder) => sources(join(ROOT, folder)))) {
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((line, i) => {
        if (!MESSAGE_MATCH.test(line)) return;
        const said = lines.slice(Math.max(0, i - 2), i + 1).join("\n");
        if (!said.toLowerCase().includes(LIBRARY_MARK)) found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found, "decide by a reason (lib/errors.ts ErrorReasons) instead").toEqual([]);
  });

  it("would catch a planted message match", () => {
    expect(MESSAGE_MATCH.test('  return error instanceof FailedPreconditionError && /^query vector has/.test(error.message);')).toBe(true);
    expect(MESSAGE_MATCH.test("  if (failure.rawMessage.includes(\"model\")) {")).toBe(true);
    expect(MESSAGE_MATCH.test("  if (hasReason(error, ErrorReasons.staleQueryVector)) {")).toBe(false);
  });
});
