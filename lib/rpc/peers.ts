// Where a service finds the others: in one process through in-memory router transports, across
// processes through gRPC at QUARRY_<NAME>_URL, by default the peer's standard port on this machine
// (lib/config.ts holds the one port table).
import type { Transport } from "@connectrpc/connect";
import { peerUrl, type Env } from "../config.ts";
import type { BuiltServer } from "./server.ts";
import { internalToken, sendInternalToken } from "./internal-token.ts";
import { grpcTransport, inProcessTransport } from "./transports.ts";

export type PeerName = "parser" | "chunker" | "embedder" | "index" | "answer";

export interface Peers {
  transport(name: PeerName): Transport;
}

export interface RemotePeers extends Peers {
  /** The address a peer is dialled at, for messages. */
  url(name: PeerName): string;
}

/** The peers a service calls, resolved at start-up so a malformed address fails before any work does. */
export function remotePeers(env: Env, needed: readonly PeerName[]): RemotePeers {
  const urls = new Map<PeerName, string>(needed.map((name) => [name, peerUrl(env, name)]));
  const transports = new Map<PeerName, Transport>([...urls].map(([name, url]) => [name, grpcTransport(url, sendInternalToken(internalToken(env)))]));
  const declared = <T>(map: Map<PeerName, T>, name: PeerName): T => {
    const value = map.get(name);
    if (value === undefined) throw new Error(`the ${name} service is not among this service's declared peers`);
    return value;
  };
  return {
    transport: (name) => declared(transports, name),
    url: (name) => declared(urls, name),
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
