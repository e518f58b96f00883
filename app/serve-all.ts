// `quarry serve all`: the six services of the distributed mode, each its own `quarry serve <name>`
// child process on its standard port (or from --port / QUARRY_BASE_PORT on), supervised: logs
// prefixed with the service name, a crashed child restarted with backoff, all stopped on Ctrl-C or
// SIGTERM. The children find each other by the same port variables, in any start order.
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { ConfigError, optional, portVariable, ServiceNames, servicePort, type Env, type ServiceName } from "../lib/config.ts";
import { shutdownGraceMs } from "../lib/service-runtime.ts";
import { Supervisor } from "./supervisor.ts";

export interface ServeAllOptions {
  /** The gateway's port; the others follow it in the standard order (QUARRY_BASE_PORT). */
  port?: string;
  host?: string;
  dataDir?: string;
}

const QUARRY_BIN = fileURLToPath(new URL("../bin/quarry.mjs", import.meta.url));

export async function serveAll(options: ServeAllOptions, outer: Env = process.env): Promise<void> {
  const env: Env = { ...outer };
  if (options.port) env.QUARRY_BASE_PORT = options.port;
  if (options.host) env.QUARRY_HOST = options.host;
  if (options.dataDir) env.QUARRY_DATA_DIR = options.dataDir;
  const host = optional(env, "QUARRY_HOST") ?? "127.0.0.1";
  const ports = Object.fromEntries(ServiceNames.map((name) => [name, servicePort(env, name)])) as Record<ServiceName, number>;
  await checkPorts(ports, host);
  // Every child gets every port, so each one's peer addresses agree with where the others listen.
  for (const name of ServiceNames) env[portVariable(name)] = String(ports[name]);

  const supervisor = new Supervisor(
    ServiceNames.map((name) => ({ name, command: process.execPath, args: [QUARRY_BIN, "serve", name], env: env as NodeJS.ProcessEnv })),
    {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
      // Each child drains for its grace (QUARRY_SHUTDOWN_GRACE_MS), then finishes the model's pass in flight.
      stopGraceMs: shutdownGraceMs(env) + 10_000,
    },
  );
  supervisor.say(`serving ${ServiceNames.map((name) => `${name} :${ports[name]}`).join(", ")}; the gateway is http://${host}:${ports.gateway}`);
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
async function checkPorts(ports: Record<ServiceName, number>, host: string): Promise<void> {
  const owners = new Map<number, ServiceName>();
  for (const name of ServiceNames) {
    const port = ports[name];
    if (port === 0) throw new ConfigError(`${portVariable(name)}=0: quarry serve all needs fixed ports, so the services can find each other`);
    const other = owners.get(port);
    if (other) throw new ConfigError(`${other} and ${name} are both set to port ${port}`);
    owners.set(port, name);
    const problem = await new Promise<string | undefined>((resolve) => {
      const probe = createServer();
      probe.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "EADDRINUSE" ? "is already in use" : error.message));
      probe.listen(port, host, () => probe.close(() => resolve(undefined)));
    });
    if (problem) {
      throw new ConfigError(`port ${port} on ${host} (the ${name} service) ${problem}; choose other ports with --port BASE or ${portVariable(name)}`);
    }
  }
}
