// A TCP port free at this moment, from the kernel (listen on port 0, read it, close). Another
// process may take it before the caller listens on it: a start on it then fails loudly with
// EADDRINUSE. For processes that must be told their port before they start (engines, peers).
import { createServer } from "node:net";

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}
