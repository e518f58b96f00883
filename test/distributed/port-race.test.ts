// The distributed harness picks every port before its process listens, so another test's pick can
// take one in between (a CI run lost a start so). Here the first pick is a port this test already
// holds: the harness must start the services again on fresh ports rather than fail the suite.
import { createServer } from "node:net";
import { expect, it, vi } from "vitest";
import { describeWithAllEngines } from "./engines-all.ts";

const held = createServer();
await new Promise<void>((resolve) => held.listen(0, "127.0.0.1", () => resolve()));
const heldPort = (held.address() as { port: number }).port;
let picks = 0;
vi.mock("../../lib/testing/free-port.ts", async (original) => {
  const real = (await original()) as { freePort: () => Promise<number> };
  return { freePort: async () => (picks++ === 0 ? heldPort : real.freePort()) };
});
const { startDistributedQuarry } = await import("../support/distributed-quarry.ts");

describeWithAllEngines("The distributed harness", (engines) => {
  it("starts the services again on fresh ports when a picked port was taken before its process listened", async () => {
    const quarry = await startDistributedQuarry(engines);
    try {
      // Six picks for the lost start, six for the one that came up.
      expect(picks).toBe(12);
      expect(Object.values(quarry.services).map((service) => service.port)).not.toContain(heldPort);
      await quarry.client.createKnowledgeBase({ name: "after-the-race" });
    } finally {
      await quarry.stop();
      held.close();
    }
  }, 300_000);
});
