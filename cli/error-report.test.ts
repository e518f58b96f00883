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

  it("tells every Connect code apart by the code, whatever the message says", () => {
    const cases: [Code, string][] = [
      [Code.InvalidArgument, "invalid_argument"],
      [Code.NotFound, "not_found"],
      [Code.AlreadyExists, "already_exists"],
      [Code.PermissionDenied, "permission_denied"],
      [Code.Unauthenticated, "unauthenticated"],
      [Code.FailedPrecondition, "failed_precondition"],
      [Code.ResourceExhausted, "resource_exhausted"],
      [Code.Unavailable, "unavailable"],
      [Code.DeadlineExceeded, "deadline_exceeded"],
      [Code.Internal, "internal"],
    ];
    for (const [code, name] of cases) {
      // The same wording under every code: only the code can tell them apart.
      expect(reportLine(new ConnectError("no Quarry gateway is listening", code))).toBe(`no Quarry gateway is listening (${name})`);
    }
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
    const denied = Object.assign(new Error("listen EACCES: permission denied 0.0.0.0:80"), { code: "EACCES", syscall: "listen", address: "0.0.0.0", port: 80 });
    expect(reportLine(denied)).toBe("not allowed to listen on 0.0.0.0:80; ports below 1024 need privileges, choose another with --port");
    const foreign = Object.assign(new Error("listen EADDRNOTAVAIL: address not available 10.9.9.9:8080"), { code: "EADDRNOTAVAIL", syscall: "listen", address: "10.9.9.9", port: 8080 });
    expect(reportLine(foreign)).toBe("10.9.9.9 is not an address of this machine; choose another with --host");
    // A message that reads like a port problem but is not a listen failure is not reported as one.
    const lookalike = new Error("listen EADDRINUSE: address already in use 127.0.0.1:8080");
    expect(reportLine(lookalike)).toBe(lookalike.stack);
  });

  it("keeps the stack of an error of no known kind: that is a bug to report", () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'id')");
    expect(reportLine(bug)).toBe(bug.stack);
  });
});
