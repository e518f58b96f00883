// grpc.health.v1 for every service: load balancers, `grpc_health_probe` and our own readiness
// waits ask it. Status is per service name; "" is the whole server.
import type { ConnectRouter } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.ts";

export class HealthRegistry {
  private readonly statuses = new Map<string, Status>([["", Status.SERVING]]);
  private readonly listeners = new Set<() => void>();

  set(service: string, serving: boolean): void {
    this.statuses.set(service, serving ? Status.SERVING : Status.NOT_SERVING);
    for (const listener of this.listeners) listener();
  }

  /** Every service of the server, and the server itself (""), at once. */
  setAll(serving: boolean): void {
    for (const name of this.statuses.keys()) this.set(name, serving);
  }

  /** Marks everything NOT_SERVING, as a draining server should. */
  shutdown(): void {
    this.setAll(false);
  }

  status(service: string): Status | undefined {
    return this.statuses.get(service);
  }

  routes(router: ConnectRouter): void {
    const registry = this;
    router.service(Health, {
      check(request) {
        const status = registry.status(request.service);
        if (status === undefined) throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
        return { status };
      },
      async *watch(request, context) {
        let last: Status | undefined;
        while (!context.signal.aborted) {
          const status = registry.status(request.service) ?? Status.SERVICE_UNKNOWN;
          if (status !== last) {
            last = status;
            yield { status };
          }
          await new Promise<void>((resolve) => {
            const wake = () => { registry.listeners.delete(wake); resolve(); };
            registry.listeners.add(wake);
            context.signal.addEventListener("abort", wake, { once: true });
          });
        }
      },
    });
  }
}
