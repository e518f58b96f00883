// A closed-loop load generator: `concurrency` clients, each sending its next request as soon as its
// previous one answered, until `requests` have been sent. Latency runs from the moment a client is
// ready to send to the moment it has the answer, so time spent queued behind other clients counts
// (a synchronous engine called in-process queues exactly like a server would).
import { setImmediate as yieldToLoop } from "node:timers/promises";

export interface LoadOptions {
  concurrency: number;
  requests: number;
}

export async function runClosedLoop(send: (i: number) => Promise<unknown> | unknown, options: LoadOptions): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const client = async () => {
    for (;;) {
      const i = next++;
      if (i >= options.requests) return;
      const started = performance.now();
      // Yield first: with a synchronous `send`, the other clients' queued requests run ahead of this
      // one, as they would in a server's queue, instead of each client monopolising the thread.
      await yieldToLoop();
      await send(i);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, client));
  return latencies;
}
