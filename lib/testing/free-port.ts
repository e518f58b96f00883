// A TCP port free at this moment, for processes that must be told their port before they start
// (engines, peers). It is drawn at random from below the kernel's ephemeral range and checked by
// listening on it. The kernel's own pick (listen on port 0) lies inside that range, where any
// outgoing connection of a test running beside this one may take it as its local port before the
// process listens: a CI run lost a gateway's start to EADDRINUSE that way. Below the range only
// another explicit pick can collide, and a random draw among thousands of ports makes that rare.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** Above the engines' fixed ports (9200, 9092, 9998, 8333, 4318, 16686 and SeaweedFS's 1xxxx). */
const LOWEST = 20_000;

function ephemeralStart(): number {
  try {
    const start = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > LOWEST + 1_000 ? start : 32_768;
  } catch {
    return 32_768;
  }
}

function listensOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  const end = ephemeralStart();
  for (let tries = 0; tries < 100; tries++) {
    const port = LOWEST + Math.floor(Math.random() * (end - LOWEST));
    if (await listensOn(port)) return port;
  }
  throw new Error(`no free port found between ${LOWEST} and ${end}`);
}
