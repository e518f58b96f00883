import { describe, expect, it } from "vitest";
import { buildMessages } from "./prompt.ts";

describe("buildMessages", () => {
  it("puts the rules in the system message and the context before the question", () => {
    const [system, user] = buildMessages("How do I reset my password?", "[1] (guide.pdf)\nOpen Settings.");
    expect(system.role).toBe("system");
    expect(system.content).toMatch(/only/);
    expect(system.content).toMatch(/\[1\]/);
    expect(system.content).toMatch(/I don't know/);
    expect(user).toEqual({ role: "user", content: "Context:\n\n[1] (guide.pdf)\nOpen Settings.\n\nQuestion: How do I reset my password?" });
  });

  it("says plainly when there is no context", () => {
    expect(buildMessages("Q?", "")[1].content).toContain("(no passages were found)");
  });
});
