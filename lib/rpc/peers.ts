// Where a service finds the others: in one process through in-memory router transports, across
// processes through gRPC at QUARRY_<NAME>_URL (required, so a missing address fails at start-up).
import type { Transport } from "@connectrpc/connect";
import { required, type Env } from "../config.ts";
import type { BuiltServer } from "./server.ts";
import { internalToken, sendInternalToken } from "./internal-token.ts";
import { grpcTransport, inProcessTransport } from "./transports.ts";

export type PeerName = "parser" | "chunker" | "embedder" | "index" | "answer";

export interface Peers {
  transport(name: PeerName): Transport;
}

/** The peers a service calls, resolved at start-up so a missing address fails before any work does. */
export function remotePeers(env: Env, needed: readonly PeerName[]): Peers {
  const transports = new Map<PeerName, Transport>(
    needed.map((name) => [
      name,
      grpcTransport(
        required(env, `QUARRY_${name.toUpperCase()}_URL`, `this service calls the ${name} service there (e.g. http://127.0.0.1:8084)`),
        sendInternalToken(internalToken(env)),
      ),
    ]),
  );
  return {
    transport(name) {
      const transport = transports.get(name);
      if (!transport) throw new Error(`the ${name} service is not among this service's declared peers`);
      return transport;
    },
  };
}

export class InProcessPeers implements Peers {
  private readonly servers = new Map<PeerName, BuiltServer>();
  private readonly transports = new Map<PeerName, Transport>();

  register(name: PeerName, server: BuiltServer): void {
    this.servers.set(name, server);
  }

  transport(name: PeerName): Transport {
    let transport = this.transports.get(name);
    if (!transport) {
      const server = this.servers.get(name);
      if (!server) throw new Error(`the ${name} service is not assembled in this process yet`);
      transport = inProcessTransport(server.routes, server.interceptors);
      this.transports.set(name, transport);
    }
    return transport;
  }
}
