#!/usr/bin/env node
// The `evalp` command. A file of the package itself, so that `npm ci` links it before any
// build; it runs the built program (`npm run build` makes dist/).
import "../dist/main.js";
