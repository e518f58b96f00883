import { describe, expect, it } from "vitest";
import { ConfigError, optionalUrl } from "./config.ts";

describe("optionalUrl", () => {
  it("passes an http(s) address through and an unset one as undefined", () => {
    expect(optionalUrl({ TIKA_URL: "http://127.0.0.1:9998" }, "TIKA_URL")).toBe("http://127.0.0.1:9998");
    expect(optionalUrl({ OPENAI_BASE_URL: " https://api.example.com/v1 " }, "OPENAI_BASE_URL")).toBe("https://api.example.com/v1");
    expect(optionalUrl({ TIKA_URL: "" }, "TIKA_URL")).toBeUndefined();
    expect(optionalUrl({}, "TIKA_URL")).toBeUndefined();
  });

  it("names the variable when the value is no URL, or not an http(s) one", () => {
    for (const value of ["notaurl", "127.0.0.1:9200", "ftp://host/x"]) {
      const read = () => optionalUrl({ OPENSEARCH_URL: value }, "OPENSEARCH_URL");
      expect(read).toThrow(ConfigError);
      expect(read).toThrow(`OPENSEARCH_URL must be an http:// or https:// URL, not "${value}"`);
    }
  });
});
