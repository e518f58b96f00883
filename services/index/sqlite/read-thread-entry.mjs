// Worker threads start without the parent's TypeScript loader, so the entry registers tsx first.
import { register } from "tsx/esm/api";

register();
const thread = await import("./read-thread.ts");
export default thread.default;
