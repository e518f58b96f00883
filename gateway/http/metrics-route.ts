// GET /metrics on the gateway's port: the Prometheus text of this process (in embedded mode, of
// every service in it). Behind the door like any HTTP route: an admin key once keys exist (Prometheus
// sends it as its bearer token), nobody on a loopback Quarry without keys.
import type { Metrics } from "../../lib/metrics/metrics.ts";
import { NotFoundError } from "../../lib/errors.ts";
import type { GuardedRoute } from "./http-route.ts";
import { connectJsonFailure } from "./wire.ts";

export function metricsRoute(metrics: Metrics): GuardedRoute {
  return {
    name: "metrics",
    methods: ["GET"],
    path: "/metrics",
    // Process-wide counts (stages, RPCs, memory) that span every tenant: an operator's view.
    role: "admin",
    scope: { kind: "none", why: "process-wide counts whose labels name no knowledge base, document or tenant" },
    body: "none",
    fail: connectJsonFailure,
    async handle({ res }) {
      const exposition = await metrics.exposition();
      if (!exposition) throw new NotFoundError("this Quarry records no metrics");
      res.writeHead(200, { "Content-Type": exposition.contentType });
      res.end(exposition.text);
    },
  };
}
