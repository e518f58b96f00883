import { describe, expect, it } from "vitest";
import { ConfigError } from "../../lib/config.ts";
import { indexConfig } from "./config.ts";

describe("indexConfig: the embedded vector index", () => {
  it("is hnsw above 20,000 vectors unless set otherwise", () => {
    const config = indexConfig({ QUARRY_DATA_DIR: "/tmp/quarry-config-test" });
    expect(config.backend === "sqlite" && config.vectorIndex).toMatchObject({ mode: "hnsw", exactBelow: 20_000 });
    const exact = indexConfig({ QUARRY_DATA_DIR: "/tmp/quarry-config-test", QUARRY_VECTOR_INDEX: "exact", QUARRY_VECTOR_INDEX_EXACT_BELOW: "500" });
    expect(exact.backend === "sqlite" && exact.vectorIndex).toMatchObject({ mode: "exact", exactBelow: 500 });
  });

  it("searches the HNSW index at expansion 128 unless QUARRY_VECTOR_INDEX_EXPANSION says otherwise, and refuses 0", () => {
    const config = indexConfig({ QUARRY_DATA_DIR: "/tmp/quarry-config-test" });
    expect(config.backend === "sqlite" && config.vectorIndex.expansionSearch).toBe(128);
    const wide = indexConfig({ QUARRY_DATA_DIR: "/tmp/quarry-config-test", QUARRY_VECTOR_INDEX_EXPANSION: "1024" });
    expect(wide.backend === "sqlite" && wide.vectorIndex.expansionSearch).toBe(1024);
    expect(() => indexConfig({ QUARRY_DATA_DIR: "/tmp/quarry-config-test", QUARRY_VECTOR_INDEX_EXPANSION: "0" })).toThrow(
      new ConfigError("QUARRY_VECTOR_INDEX_EXPANSION must be at least 1, not 0"),
    );
  });

  it("refuses a setting it does not know, naming the ones it does", () => {
    expect(() => indexConfig({ QUARRY_DATA_DIR: "/tmp/quarry-config-test", QUARRY_VECTOR_INDEX: "ivf" })).toThrow(
      new ConfigError(`QUARRY_VECTOR_INDEX must be one of hnsw, exact, not "ivf"`),
    );
  });
});
