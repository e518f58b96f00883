#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx quarry` works in a clone without a build step.
import { register } from "tsx/esm/api";

register();
await import("../cli/main.ts");
