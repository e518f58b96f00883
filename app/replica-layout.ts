// Where `quarry serve all --replicas N` puts each process: every service gets N consecutive ports, in
// the standard order (gateway, parser, chunker, embedder, index, answer), so with N = 1 the layout is
// exactly the usual one. Replica r of every service forms one "column": its port variables name the
// replica-r port of each peer, so the gateways' calls spread over the answer and index replicas
// instead of all landing on the first.
import { ConfigError, optional, portVariable, ServiceNames, ServicePorts, servicePort, type Env, type ServiceName } from "../lib/config.ts";

export interface ReplicaSlot {
  /** The label in the supervisor's log: the service's name, or `<service>-<r>` from 1 when N > 1. */
  label: string;
  service: ServiceName;
  /** 0-based. */
  replica: number;
  port: number;
  /** Port variables for this process: its own port and its column's peers. */
  ports: Env;
}

/** Every service's ports, replica by replica; QUARRY_<SERVICE>_PORT, when set, is the first of its N. */
export function replicaPorts(env: Env, replicas: number): Record<ServiceName, number[]> {
  if (!Number.isInteger(replicas) || replicas < 1) throw new ConfigError(`--replicas must be a whole number of at least 1, not "${replicas}"`);
  const base = servicePort(env, "gateway");
  const first = (name: ServiceName) => {
    if (replicas === 1 || optional(env, portVariable(name)) !== undefined) return servicePort(env, name);
    return base + (ServicePorts[name] - ServicePorts.gateway) * replicas;
  };
  const ports = Object.fromEntries(ServiceNames.map((name) => [name, Array.from({ length: replicas }, (_, r) => first(name) + r)])) as Record<ServiceName, number[]>;
  const highest = Math.max(...Object.values(ports).flat());
  if (highest > 65535) throw new ConfigError(`${replicas} replicas of six services from port ${base} run past 65535; choose a lower --port`);
  return ports;
}

export function replicaSlots(env: Env, replicas: number): ReplicaSlot[] {
  const ports = replicaPorts(env, replicas);
  return Array.from({ length: replicas }, (_, replica) =>
    ServiceNames.map((service) => ({
      label: replicas === 1 ? service : `${service}-${replica + 1}`,
      service,
      replica,
      port: ports[service][replica]!,
      ports: Object.fromEntries(ServiceNames.map((name) => [portVariable(name), String(ports[name][replica])])),
    })),
  ).flat();
}

/**
 * Several replicas share state only through the engines: without Kafka each would keep its own
 * SQLite event log, and without OpenSearch (or Elasticsearch) its own catalog.
 */
export function checkReplicaEngines(env: Env, replicas: number): void {
  if (replicas === 1) return;
  const missing = [
    optional(env, "KAFKA_BROKERS") === undefined ? "KAFKA_BROKERS (the stages' consumer groups)" : undefined,
    optional(env, "OPENSEARCH_URL") === undefined && optional(env, "ELASTICSEARCH_URL") === undefined ? "OPENSEARCH_URL (the catalog and chunks every replica shares)" : undefined,
  ].filter((m) => m !== undefined);
  if (missing.length > 0) throw new ConfigError(`--replicas ${replicas} needs engines the replicas share: set ${missing.join(" and ")}`);
}
