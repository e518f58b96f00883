// Readiness as an orchestrator checks it: grpc.health.v1 Check over real gRPC until the whole server
// ("") answers SERVING. The distributed test harness and `quarry bench soak --backend distributed` use it.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.ts";

export async function waitServing(service: { name: string; url: string }, timeoutMs = 60_000): Promise<void> {
  const health = createClient(Health, createGrpcTransport({ baseUrl: service.url }));
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const { status } = await health.check({ service: "" }, { timeoutMs: 2_000 });
      if (status === HealthCheckResponse_ServingStatus.SERVING) return;
      last = `status ${HealthCheckResponse_ServingStatus[status]}`;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${service.name} at ${service.url} is not SERVING: ${String(last)}`);
}
