// What `quarry bench soak` runs against: a Quarry it started itself, the faults it may inject into
// it, and a way to read the chunk rows it really stored. One per mode (soak-embedded.ts,
// soak-distributed.ts), so the soak's schedule and ledger are the same for both.
import type { QuarryClient } from "../client/gateway-client.ts";
import type { StoredChunk } from "./soak-accounting.ts";

export interface SoakFault {
  /** What is done, as the report prints it ("kill -9 quarry serve"). */
  name: string;
  /** Injects the fault and undoes it (restart, start again); resolves once the part is back. Returns how long it was away. */
  inject(): Promise<{ downMs: number }>;
}

export interface SoakTarget {
  backend: "embedded" | "distributed";
  /** The gateway; its address stays the same across restarts. */
  client: QuarryClient;
  url: string;
  faults: SoakFault[];
  readChunks(knowledgeBaseId: string): Promise<StoredChunk[]>;
  /** Where the target keeps its data (the embedded SQLite folder; the distributed run's data folder). */
  dataDir: string;
  /** Stops everything it started; removes its data unless told to keep it. */
  stop(options?: { keepData?: boolean }): Promise<void>;
}
