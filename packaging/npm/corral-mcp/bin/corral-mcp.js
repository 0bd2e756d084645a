#!/usr/bin/env node
// `corral-mcp ARGS` is `corral mcp ARGS`: what an MCP client's config starts
// (`npx corral-mcp --workspace .`).
"use strict";
require("../lib/run.js").run(["mcp", ...process.argv.slice(2)]);
