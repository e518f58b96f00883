import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { describeWithEngine } from "../../test/support/engines.ts";
import { DocumentLeaseStore } from "./document-lease-store.ts";
import { ElasticsearchLeaseDocuments } from "./engine-elasticsearch-lease-documents.ts";
import { OpenSearchLeaseDocuments } from "./engine-opensearch-lease-documents.ts";
import { SqliteLeaseStore } from "./sqlite-lease-store.ts";
import { describeLeaseStoreContract } from "./testing/lease-store.contract.ts";

describeLeaseStoreContract("SQLite (one file, a connection per process)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "quarry-leases-"));
  return { open: async () => new SqliteLeaseStore(join(dir, "quarry.db")), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

describeWithEngine("OPENSEARCH_URL", "OpenSearch leases", (url) => {
  const index = `quarry-test-${randomUUID().slice(0, 12)}-leases`;
  describeLeaseStoreContract("OpenSearch (a document per lease, if_seq_no/if_primary_term)", async () => ({
    open: async () => new DocumentLeaseStore(new OpenSearchLeaseDocuments({ url }, index)),
    cleanup: () => deleteIndex(url, index),
  }));
});

describeWithEngine("ELASTICSEARCH_URL", "Elasticsearch leases", (url) => {
  const index = `quarry-test-${randomUUID().slice(0, 12)}-leases`;
  describeLeaseStoreContract("Elasticsearch (a document per lease, if_seq_no/if_primary_term)", async () => ({
    open: async () => new DocumentLeaseStore(new ElasticsearchLeaseDocuments({ url }, index)),
    cleanup: () => deleteIndex(url, index),
  }));
});

async function deleteIndex(url: string, index: string): Promise<void> {
  await fetch(`${url.replace(/\/$/, "")}/${index}`, { method: "DELETE" });
}
