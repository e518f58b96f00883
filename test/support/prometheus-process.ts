// What the tests that run the real Prometheus share: finding Debian's binary (a requirement that
// fails under QUARRY_REQUIRE_ENGINES and is skipped loudly elsewhere) and a free port for its web API.
import { accessSync, constants } from "node:fs";
import net from "node:net";
import { delimiter, join } from "node:path";
import type { Requirement } from "./engines.ts";

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

export const prometheusBinary: Requirement = {
  value: process.env.QUARRY_PROMETHEUS_BIN ?? onPath("prometheus"),
  requiredBy: "QUARRY_REQUIRE_ENGINES",
  missing: "the prometheus binary is not on PATH",
  hint: "Install it with apt-get install -y prometheus (CI does, in .ci/run)",
};

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}
