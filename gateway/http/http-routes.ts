// Every plain-HTTP route the gateway serves, in the order they are tried. A new route is added
// here and gets a row in test/e2e/http-access.test.ts (which refuses a route it has no row for).
import type { BlobStore } from "../../lib/blobs/blob-store.ts";
import type { Logger } from "../../lib/logger.ts";
import { noMetrics, type Metrics } from "../../lib/metrics/metrics.ts";
import { mcpRoute } from "../mcp/http-handler.ts";
import { metricsRoute } from "./metrics-route.ts";
import type { UploadLimits } from "../upload.ts";
import { consoleAssets } from "./console-assets.ts";
import { difyRoutes } from "./dify/dify-routes.ts";
import type { HttpRoute, OpenRoute } from "./http-route.ts";
import { openAiRoutes } from "./openai/openai-routes.ts";
import { restRoutes } from "./rest/rest-routes.ts";

export function httpRoutes(options: { consoleDir?: string; limits: UploadLimits; blobs: BlobStore; logger: Logger; metrics?: Metrics }): HttpRoute[] {
  return [
    ...openAiRoutes(),
    ...difyRoutes(),
    ...restRoutes(options.limits, options.blobs),
    mcpRoute(options.logger),
    metricsRoute(options.metrics ?? noMetrics),
    consoleRoute(options.consoleDir),
  ];
}

/** The browser console's built files, for whatever no other route answers. */
function consoleRoute(dir: string | undefined): OpenRoute {
  return {
    name: "console",
    methods: ["GET", "HEAD"],
    path: "/*",
    open: "the console's files hold no data: the console then calls the API with the key its user gives",
    serve: consoleAssets(dir),
  };
}
