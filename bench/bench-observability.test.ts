import { describe, expect, it } from "vitest";
import { withinArmSpread } from "./bench-observability.ts";

describe("withinArmSpread", () => {
  it("is the widest p50 ratio between two processes of the same arm, never across arms", () => {
    const spread = withinArmSpread([
      { name: "on", arm: "on", searchP50: 11, documentsPerSecond: 5 },
      { name: "off", arm: "off", searchP50: 10, documentsPerSecond: 5 },
      { name: "on-2", arm: "on", searchP50: 11.22, documentsPerSecond: 5 },
      { name: "off-2", arm: "off", searchP50: 10.5, documentsPerSecond: 5 },
    ]);
    // off-2 / off = 1.05 is wider than on-2 / on = 1.02; on / off (1.10) is the ratio measured, not noise.
    expect(spread).toBeCloseTo(1.05, 10);
  });

  it("is undefined with one process per arm, which carries no noise floor of its own", () => {
    expect(withinArmSpread([{ name: "on", arm: "on", searchP50: 11, documentsPerSecond: 5 }, { name: "off", arm: "off", searchP50: 10, documentsPerSecond: 5 }])).toBeUndefined();
  });
});
