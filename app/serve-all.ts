// `quarry serve all`: the six services of the distributed mode, each its own `quarry serve <name>`
// child process on its standard port (or from --port / QUARRY_BASE_PORT on), supervised: logs
// prefixed with the service name, a crashed child restarted with backoff, all stopped on Ctrl-C or
// SIGTERM. The children find each other by the same port variables, in any start order.
// --replicas N runs N of each (a local trial of the cluster layout; ports from replica-layout.ts).
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { ConfigError, optional, portVariable, type Env } from "../lib/config.ts";
import { shutdownGraceMs } from "../lib/service-runtime.ts";
import { checkReplicaEngines, replicaSlots, type ReplicaSlot } from "./replica-layout.ts";
import { Supervisor } from "./supervisor.ts";

export interface ServeAllOptions {
  /** The gateway's port; the others follow it in the standard order (QUARRY_BASE_PORT). */
  port?: string;
  host?: string;
  dataDir?: string;
  /** Processes of each service (default 1). */
  replicas?: number;
}

const QUARRY_BIN = fileURLToPath(new URL("../bin/quarry.mjs", import.meta.url));

export async function serveAll(options: ServeAllOptions, outer: Env = process.env): Promise<void> {
  const env: Env = { ...outer };
  if (options.port) env.QUARRY_BASE_PORT = options.port;
  if (options.host) env.QUARRY_HOST = options.host;
  if (options.dataDir) env.QUARRY_DATA_DIR = options.dataDir;
  const host = optional(env, "QUARRY_HOST") ?? "127.0.0.1";
  const replicas = options.replicas ?? 1;
  checkReplicaEngines(env, replicas);
  const slots = replicaSlots(env, replicas);
  await checkPorts(slots, host);

  const supervisor = new Supervisor(
    // Every child gets its column's ports, so each one's peer addresses agree with where the others listen.
    slots.map((slot) => ({ name: slot.label, command: process.execPath, args: [QUARRY_BIN, "serve", slot.service], env: { ...env, ...slot.ports } as NodeJS.ProcessEnv })),
    {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
      // Each child drains for its grace (QUARRY_SHUTDOWN_GRACE_MS), then finishes the model's pass in flight.
      stopGraceMs: shutdownGraceMs(env) + 10_000,
    },
  );
  const gateways = slots.filter((slot) => slot.service === "gateway").map((slot) => `http://${host}:${slot.port}`);
  supervisor.say(`serving ${slots.map((slot) => `${slot.label} :${slot.port}`).join(", ")}; the gateway${gateways.length > 1 ? "s are" : " is"} ${gateways.join(", ")}`);
  supervisor.start();

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) {
      supervisor.say(`${signal} again: killing every service`);
      supervisor.kill();
      process.exit(1);
    }
    supervisor.say(`${signal}: stopping every service`);
    void supervisor.stop().then(() => {
      supervisor.say("all services stopped");
      process.exit(0);
    });
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}

/** Each port distinct and free, so a taken port is one clear line instead of a child crashing in a loop. */
async function checkPorts(slots: ReplicaSlot[], host: string): Promise<void> {
  const owners = new Map<number, string>();
  for (const { label: name, port, service } of slots) {
    if (port === 0) throw new ConfigError(`${portVariable(service)}=0: quarry serve all needs fixed ports, so the services can find each other`);
    const other = owners.get(port);
    if (other) throw new ConfigError(`${other} and ${name} are both set to port ${port}`);
    owners.set(port, name);
    const problem = await new Promise<string | undefined>((resolve) => {
      const probe = createServer();
      probe.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "EADDRINUSE" ? "is already in use" : error.message));
      probe.listen(port, host, () => probe.close(() => resolve(undefined)));
    });
    if (problem) {
      throw new ConfigError(`port ${port} on ${host} (the ${name} service) ${problem}; choose other ports with --port BASE or ${portVariable(service)}`);
    }
  }
}
