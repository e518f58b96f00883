import { describe, expect, it } from "vitest";
import { errorFromThread, ErrorReasons, FailedPreconditionError, hasReason, InvalidInputError } from "./errors.ts";

describe("errorFromThread", () => {
  it("rebuilds a thread's error with its kind and its reason, which callers decide by", () => {
    const error = errorFromThread({ name: "FailedPreconditionError", message: "query vector has 384 dimensions; the base stores 512", reason: ErrorReasons.staleQueryVector });
    expect(error).toBeInstanceOf(FailedPreconditionError);
    expect(error.message).toBe("query vector has 384 dimensions; the base stores 512");
    expect(hasReason(error, ErrorReasons.staleQueryVector)).toBe(true);
  });

  it("reads an unknown kind as the input's fault, without a reason when none came", () => {
    const error = errorFromThread({ name: "RangeError", message: "bad" });
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.reason).toBeUndefined();
  });
});
