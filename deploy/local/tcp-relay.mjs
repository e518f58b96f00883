// A plain TCP relay: node tcp-relay.mjs LISTEN_HOST:PORT=TARGET_HOST:PORT ...
//
// Why it exists: OpenSearch enforces its production checks (65,535 file descriptors among them)
// once its transport address is not a loopback one, and a container without CAP_SYS_RESOURCE cannot
// raise the limit. engines.sh --hosts therefore keeps each node's transport on its own namespace's
// 127.0.0.1 and lets this relay carry it across the namespaces' veth links: every byte still crosses
// the link that `engines.sh cut` takes down. No npm package does only this; Node's net module is enough.
import net from "node:net";

for (const spec of process.argv.slice(2)) {
  const match = /^(.+):(\d+)=(.+):(\d+)$/.exec(spec);
  if (!match) {
    console.error(`tcp-relay: "${spec}" is not LISTEN_HOST:PORT=TARGET_HOST:PORT`);
    process.exit(2);
  }
  const [, listenHost, listenPort, targetHost, targetPort] = match;
  const server = net.createServer((inbound) => {
    const outbound = net.connect(Number(targetPort), targetHost);
    inbound.setNoDelay(true);
    outbound.setNoDelay(true);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
    };
    for (const socket of [inbound, outbound]) {
      socket.on("error", end);
      socket.on("close", end);
    }
  });
  server.on("error", (error) => {
    console.error(`tcp-relay: ${spec}: ${error.message}`);
    process.exit(1);
  });
  server.listen(Number(listenPort), listenHost);
}
