// A TCP proxy a test can cut and restore, so an engine (Tika, OpenSearch) can "go down" for one
// service without stopping the engine every other test on the machine shares. Hand-written because
// it is twenty lines of node:net and no package does exactly cut-and-restore on a fixed port.
import { createServer, connect, type Server, type Socket } from "node:net";

export interface TcpProxy {
  /** host:port the proxy listens on. */
  readonly address: string;
  readonly port: number;
  /** Drops every open connection and refuses new ones (ECONNREFUSED), as a stopped engine would. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** `onClientData` sees every byte the client sends (a test can check what a client put on the wire). */
export async function startTcpProxy(target: { host: string; port: number }, onClientData?: (chunk: Buffer) => void): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(target.port, target.host);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => {
            client.destroy();
            upstream.destroy();
          });
        }
        if (onClientData) client.on("data", onClientData);
        client.pipe(upstream).pipe(client);
      });
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => {
        server = s;
        resolve((s.address() as { port: number }).port);
      });
    });

  const stop = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };

  const port = await listen(0);
  return {
    address: `127.0.0.1:${port}`,
    port,
    cut: stop,
    async restore() {
      if (!server) await listen(port);
    },
    close: stop,
  };
}
