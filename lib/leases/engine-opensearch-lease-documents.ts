// The leases index on OpenSearch (document-lease-store.ts's port); the client's bodies go in `{ body }`.
import { Client } from "@opensearch-project/opensearch";
import { openSearchClientOptions, type EngineConnection } from "../engine-connection.ts";
import { alreadyExists, conditional, LEASE_MAPPINGS, missingAsUndefined, untilReadable, type LeaseDocuments, type VersionedLease } from "./document-lease-store.ts";
import type { LeaseRecord } from "./lease-store.ts";
import { replicationSettings } from "../index-replication.ts";

export class OpenSearchLeaseDocuments implements LeaseDocuments {
  readonly engine = "OpenSearch";
  private readonly client: Client;

  constructor(
    connection: EngineConnection,
    private readonly index: string,
    /** Unset: one replica where the cluster has a second data node, as every index Quarry makes (lib/index-replication.ts). */
    private readonly replicas?: number,
  ) {
    this.client = new Client(openSearchClientOptions(connection));
  }

  async ensureIndex(): Promise<void> {
    const { body: exists } = await this.client.indices.exists({ index: this.index });
    if (!exists) {
      await this.client.indices.create({ index: this.index, body: { settings: replicationSettings(this.replicas), mappings: LEASE_MAPPINGS as never } }).catch((error: unknown) => {
        if (!alreadyExists(error)) throw error;
      });
    }
    // A new index answers reads only once its primary shard has started.
    await this.client.cluster.health({ index: this.index, wait_for_status: "yellow", timeout: "60s" });
    await untilReadable(() => this.client.get({ index: this.index, id: "readiness-probe" }));
  }

  async read(name: string): Promise<VersionedLease | undefined> {
    const response = await missingAsUndefined(() => this.client.get({ index: this.index, id: name }));
    const body = response?.body as { found?: boolean; _source?: LeaseRecord; _seq_no?: number; _primary_term?: number } | undefined;
    if (!body?.found || !body._source) return undefined;
    return { lease: body._source, seqNo: body._seq_no!, primaryTerm: body._primary_term! };
  }

  create(name: string, lease: LeaseRecord): Promise<boolean> {
    return conditional(() => this.client.create({ index: this.index, id: name, body: lease as never }));
  }

  replace(name: string, lease: LeaseRecord, version: VersionedLease): Promise<boolean> {
    return conditional(() => this.client.index({ index: this.index, id: name, body: lease as never, if_seq_no: version.seqNo, if_primary_term: version.primaryTerm }));
  }

  async remove(name: string, version: VersionedLease): Promise<boolean> {
    return (await missingAsUndefined(() => conditional(() => this.client.delete({ index: this.index, id: name, if_seq_no: version.seqNo, if_primary_term: version.primaryTerm })))) ?? false;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
