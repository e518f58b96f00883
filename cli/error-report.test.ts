import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../lib/config.ts";
import { FailedPreconditionError } from "../lib/errors.ts";
import { codeName, reportLine, UsageError } from "./error-report.ts";
import { GatewayUnreachableError } from "../client/gateway-client.ts";

describe("reportLine", () => {
  it("prints a Connect error's message with its code as gRPC tools name it", () => {
    expect(reportLine(new ConnectError("knowledge base nope not found", Code.NotFound))).toBe("knowledge base nope not found (not_found)");
    expect(codeName(Code.InvalidArgument)).toBe("invalid_argument");
    expect(codeName(Code.DeadlineExceeded)).toBe("deadline_exceeded");
  });

  it("prints errors written for people as they are, whatever they say", () => {
    expect(reportLine(new ConfigError("QUARRY_PORT must be a whole number, not \"abc\""))).toBe('QUARRY_PORT must be a whole number, not "abc"');
    expect(reportLine(new UsageError("/nope: no such file or folder"))).toBe("/nope: no such file or folder");
    expect(reportLine(new FailedPreconditionError("the local embedding model is missing; install it with `npm run setup`"))).toContain("npm run setup");
    // What the Connect client makes of an interceptor's error: the explanation is its cause.
    const unreachable = new GatewayUnreachableError("no Quarry gateway is listening at http://127.0.0.1:1");
    expect(reportLine(ConnectError.from(unreachable))).toBe("no Quarry gateway is listening at http://127.0.0.1:1");
  });

  it("turns a port that cannot be bound into a sentence, by its error code", () => {
    const inUse = Object.assign(new Error("listen EADDRINUSE: address already in use 127.0.0.1:8080"), { code: "EADDRINUSE", syscall: "listen", address: "127.0.0.1", port: 8080 });
    expect(reportLine(inUse)).toBe("port 8080 is already in use on 127.0.0.1; stop what holds it or choose another with --port");
  });

  it("keeps the stack of an error of no known kind: that is a bug to report", () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'id')");
    expect(reportLine(bug)).toBe(bug.stack);
  });
});
