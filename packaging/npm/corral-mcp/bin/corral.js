#!/usr/bin/env node
// `corral ARGS`: the whole command line tool, on PATH after a global install.
"use strict";
require("../lib/run.js").run(process.argv.slice(2));
