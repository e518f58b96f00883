// Per-suite isolation on a shared engine server: every factory call gets its own prefix for what it
// creates, and cleanup deletes everything under that prefix before closing the suite's client, so a
// test that closed the engine's client can still clean up (the deletion uses a client of its own).
import { randomUUID } from "node:crypto";

export interface EngineTestSpace<C> {
  client: C;
  prefix: string;
  cleanup(): Promise<void>;
}

export function engineTestSpace<C extends { close(): Promise<unknown> }>(client: C, deleteNamespace: (prefix: string) => Promise<void>): EngineTestSpace<C> {
  const prefix = `quarry-test-${randomUUID().replaceAll("-", "").slice(0, 12)}-`;
  return {
    client,
    prefix,
    async cleanup() {
      try {
        await deleteNamespace(prefix);
      } finally {
        await client.close().catch(() => undefined);
      }
    },
  };
}
