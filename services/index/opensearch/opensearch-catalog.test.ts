import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeCatalogContract } from "../testing/catalog.contract.ts";
import { OpenSearchCatalog } from "./opensearch-catalog.ts";
import { openSearchTestSpace } from "../testing/opensearch-test-support.ts";

describeWithEngine("OPENSEARCH_URL", "OpenSearchCatalog", (url) => {
  describeCatalogContract("OpenSearch", async () => {
    const space = openSearchTestSpace(url);
    return { catalog: new OpenSearchCatalog(space.client, { index: `${space.prefix}catalog`, listPageSize: 2 }), cleanup: () => space.cleanup() };
  });
});
