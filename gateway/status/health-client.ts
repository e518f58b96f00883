// Asks each service behind the gateway for its grpc.health.v1 status, as the status view shows it:
// through the same transports the gateway calls them with (in-memory embedded, gRPC distributed).
import { createClient } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.ts";
import type { PeerName, Peers, RemotePeers } from "../../lib/rpc/peers.ts";

export const STATUS_PEERS: readonly PeerName[] = ["parser", "chunker", "embedder", "index", "answer"];

/** A health check that does not answer within this is reported as unreachable, not waited for. */
const CHECK_TIMEOUT_MS = 2_000;

export interface ServiceHealthReport {
  name: string;
  address: string;
  serving: boolean;
  error: string;
}

export type HealthProbe = () => Promise<ServiceHealthReport[]>;

export function healthProbe(peers: Peers): HealthProbe {
  const remote = "url" in peers ? (peers as RemotePeers) : undefined;
  return () =>
    Promise.all(
      STATUS_PEERS.map(async (name): Promise<ServiceHealthReport> => {
        const address = remote ? remote.url(name) : "in process";
        try {
          const { status } = await createClient(Health, peers.transport(name)).check({ service: "" }, { timeoutMs: CHECK_TIMEOUT_MS });
          return { name, address, serving: status === Status.SERVING, error: status === Status.SERVING ? "" : `it reports ${Status[status]}` };
        } catch (error) {
          return { name, address, serving: false, error: error instanceof Error ? error.message : String(error) };
        }
      }),
    );
}
