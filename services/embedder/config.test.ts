import { describe, expect, it } from "vitest";
import { embedderConfig } from "./config.ts";

const endpoint = { QUARRY_EMBEDDING_PROVIDER: "openai", QUARRY_EMBEDDING_BASE_URL: "http://127.0.0.1:1/v1", QUARRY_EMBEDDING_MODEL: "small", QUARRY_EMBEDDING_DIMENSION: "384" };

describe("QUARRY_EMBEDDING_MODELS", () => {
  it("adds the endpoint's further models with their dimensions, the default not twice, names with colons kept whole", () => {
    const config = embedderConfig({ ...endpoint, QUARRY_EMBEDDING_MODELS: "small:384, org:large:1024,large-2:768" });
    expect(config.provider === "openai" && config.moreModels).toEqual([
      { model: "org:large", dimension: 1024 },
      { model: "large-2", dimension: 768 },
    ]);
  });

  it("refuses an entry without a positive whole dimension, naming it", () => {
    for (const entry of ["large", "large:", ":768", "large:0", "large:7.5"]) {
      expect(() => embedderConfig({ ...endpoint, QUARRY_EMBEDDING_MODELS: `small:384,${entry}` })).toThrow(`"${entry}" is not one`);
    }
  });
});
