// The SearchEngine contract against a real OpenSearch, once per hybrid path: the _msearch path fused
// by rrf-fusion.ts, and the native hybrid query through a neural-search RRF pipeline (searches that
// 2.19's pipeline cannot compute the same way — weights, several knowledge bases — still take the
// _msearch path there; opensearch-native-hybrid.test.ts checks which path ran).
import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeSearchEngineContract } from "../testing/search-engine.contract.ts";
import { OpenSearchSearchEngine, type OpenSearchSearchEngineOptions } from "./opensearch-search-engine.ts";
import { openSearchTestSpace } from "../testing/opensearch-test-support.ts";

describeWithEngine("OPENSEARCH_URL", "OpenSearchSearchEngine", (url) => {
  const variants: [string, (prefix: string) => OpenSearchSearchEngineOptions][] = [
    ["OpenSearch, _msearch hybrid", (prefix) => ({ indexPrefix: `${prefix}chunks-` })],
    ["OpenSearch, native hybrid (RRF pipeline)", (prefix) => ({ indexPrefix: `${prefix}chunks-`, nativeHybrid: { fusion: "rrf", pipelinePrefix: prefix } })],
  ];
  for (const [name, options] of variants) {
    describeSearchEngineContract(name, async () => {
      const space = openSearchTestSpace(url);
      const engine = new OpenSearchSearchEngine(space.client, options(space.prefix));
      await engine.prepare();
      return {
        engine,
        async cleanup() {
          await engine.close();
          await space.cleanup();
        },
      };
    });
  }
});
