import { describe, expect, it } from "vitest";
import { ConfigError } from "../../lib/config.ts";
import { silentLogger } from "../../lib/logger.ts";
import { checkBindPolicy, isLoopback } from "./bind-policy.ts";

describe("bind policy", () => {
  it("knows loopback addresses", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"]) expect(isLoopback(h), h).toBe(true);
    for (const h of ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "example.com", "::ffff:10.0.0.1"]) expect(isLoopback(h), h).toBe(false);
  });

  it("refuses a non-loopback address without a key unless --insecure, and never asks when loopback", async () => {
    const none = async () => false;
    await expect(checkBindPolicy({ host: "0.0.0.0", insecure: false, keysConfigured: none, logger: silentLogger })).rejects.toThrow(ConfigError);
    await expect(checkBindPolicy({ host: "0.0.0.0", insecure: false, keysConfigured: none, logger: silentLogger })).rejects.toThrow(/refusing to serve on 0\.0\.0\.0 without an API key/);
    await checkBindPolicy({ host: "0.0.0.0", insecure: true, keysConfigured: none, logger: silentLogger });
    await checkBindPolicy({ host: "0.0.0.0", insecure: false, keysConfigured: async () => true, logger: silentLogger });
    await checkBindPolicy({ host: "127.0.0.1", insecure: false, keysConfigured: none, logger: silentLogger });
    await expect(
      checkBindPolicy({ host: "10.1.2.3", insecure: false, keysConfigured: () => Promise.reject(new Error("index down")), logger: silentLogger, waitMs: 300 }),
    ).rejects.toThrow(/cannot tell whether any API key exists/);
    await checkBindPolicy({ host: "127.0.0.1", insecure: false, keysConfigured: () => Promise.reject(new Error("index not up yet")), logger: silentLogger });
    // An index that answers after a while is waited for.
    let calls = 0;
    await checkBindPolicy({
      host: "0.0.0.0",
      insecure: false,
      keysConfigured: async () => {
        if (++calls < 2) throw new Error("index starting");
        return true;
      },
      logger: silentLogger,
      waitMs: 5_000,
    });
    expect(calls).toBe(2);
  });
});
