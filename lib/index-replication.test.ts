import { describe, expect, it } from "vitest";
import { replicationSettings } from "./index-replication.ts";

describe("index replication settings", () => {
  it("let the engine keep one replica where a second data node exists, when replicas are unset", () => {
    expect(replicationSettings(undefined)).toEqual({ number_of_shards: 1, auto_expand_replicas: "0-1" });
  });

  it("fix the count when it is set, switching auto-expansion off so the engine does not override it", () => {
    expect(replicationSettings(2, 3)).toEqual({ number_of_shards: 3, number_of_replicas: 2, auto_expand_replicas: false });
    expect(replicationSettings(0)).toEqual({ number_of_shards: 1, number_of_replicas: 0, auto_expand_replicas: false });
  });
});
