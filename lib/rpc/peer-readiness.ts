// Start order does not matter in distributed mode: a service whose peers are not up yet listens,
// answers NOT_SERVING on its health check, and waits for them with backoff instead of exiting.
// Only start-up waits here; a peer that goes away later fails single calls with `unavailable`,
// which the bus's redrive retries.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.ts";
import { Backoff, sleep, type BackoffOptions } from "../backoff.ts";
import { UnavailableError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { PeerName, RemotePeers } from "./peers.ts";

export const PEER_WAIT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 5_000 };

export interface WaitOptions {
  logger: Logger;
  signal: AbortSignal;
  backoff?: BackoffOptions;
}

/** Resolves once every peer's whole server ("") answers SERVING; a peer that is itself waiting says NOT_SERVING. */
export async function waitForPeers(peers: RemotePeers, names: readonly PeerName[], options: WaitOptions): Promise<void> {
  for (const name of names) {
    const health = createClient(Health, peers.transport(name));
    await retryWhileUnavailable(`the ${name} service at ${peers.url(name)}`, async () => {
      const { status } = await health.check({ service: "" }, { timeoutMs: 2_000, signal: options.signal });
      if (status !== Status.SERVING) throw new UnavailableError(`it reports ${Status[status]}`);
    }, options);
  }
}

/**
 * Runs `attempt` until it succeeds, waiting with backoff after each failure that a peer coming up
 * would cure (unavailable, deadline exceeded); any other failure is the caller's to see.
 */
export async function retryWhileUnavailable<T>(what: string, attempt: () => Promise<T>, options: WaitOptions): Promise<T> {
  const backoff = new Backoff(options.backoff ?? PEER_WAIT_BACKOFF);
  for (let tries = 1; ; tries++) {
    options.signal.throwIfAborted();
    try {
      const result = await attempt();
      if (tries > 1) options.logger.info({ tries }, `${what} is up`);
      return result;
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason;
      const reason = transientReason(error);
      if (reason === undefined) throw error;
      const retryInMs = backoff.next();
      options.logger.info({ tries, retryInMs }, `waiting for ${what}: ${reason}`);
      await sleep(retryInMs, options.signal);
    }
  }
}

function transientReason(error: unknown): string | undefined {
  if (error instanceof UnavailableError) return error.message;
  const connect = ConnectError.from(error);
  if (connect.code === Code.Unavailable || connect.code === Code.DeadlineExceeded) return connect.rawMessage;
  return undefined;
}
