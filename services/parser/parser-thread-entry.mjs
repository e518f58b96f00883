// Worker threads start without the parent's TypeScript loader, so the entry registers tsx first.
import { register } from "tsx/esm/api";

register();
await import("./parser-thread.ts");
