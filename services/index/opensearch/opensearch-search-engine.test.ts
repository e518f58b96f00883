import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeSearchEngineContract } from "../search-engine.contract.ts";
import { OpenSearchSearchEngine } from "./opensearch-search-engine.ts";
import { openSearchTestSpace } from "./opensearch-test-support.ts";

describeWithEngine("OPENSEARCH_URL", "OpenSearchSearchEngine", (url) => {
  describeSearchEngineContract("OpenSearch", async () => {
    const space = openSearchTestSpace(url);
    const engine = new OpenSearchSearchEngine(space.client, { indexPrefix: `${space.prefix}chunks-` });
    return {
      engine,
      async cleanup() {
        await engine.close();
        await space.cleanup();
      },
    };
  });
});
