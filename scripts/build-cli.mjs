#!/usr/bin/env node
// Compiles the CLI ahead of time (bin/cli-bundle.mjs) when it is missing or stale: run by
// `npm install` (prepare), `npm start` and `npm test`, so that no command pays for it later.
import { buildBundle, bundleIsFresh } from "../bin/cli-bundle.mjs";

if (!bundleIsFresh()) await buildBundle();
