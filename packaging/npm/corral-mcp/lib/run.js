// Finds the `corral` binary of this platform's package (an optional dependency, installed
// only where its `os` and `cpu` match) and runs it, passing signals on and exiting as it
// exits. Nothing is downloaded at install or at run time.
"use strict";

const { spawn } = require("node:child_process");

const PACKAGES = {
  "linux-x64": "corral-mcp-linux-x64",
  "linux-arm64": "corral-mcp-linux-arm64",
};

function binary() {
  const platform = `${process.platform}-${process.arch}`;
  const name = PACKAGES[platform];
  if (name === undefined) {
    fail(
      `corral runs on Linux x64 and arm64 only, not ${platform}: ` +
        "its sandbox is built on Linux's Landlock, seccomp and namespaces",
    );
  }
  try {
    return require.resolve(`${name}/bin/corral`);
  } catch {
    fail(
      `the corral binary for ${platform} is not installed: it comes in the package ${name}, ` +
        "an optional dependency of corral-mcp, which an install with --omit=optional " +
        "(or --no-optional, or optional=false in .npmrc) leaves out. Install again without " +
        `that option, or add it yourself: npm install ${name}`,
    );
  }
}

function fail(message) {
  process.stderr.write(`corral-mcp: ${message}\n`);
  process.exit(127);
}

/** Run corral with `args`, as this process: its stdio, its signals, its exit status. */
function run(args) {
  const child = spawn(binary(), args, { stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("error", (error) => fail(`starting corral failed: ${error.message}`));
  child.on("exit", (code, signal) => {
    if (signal !== null) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(code);
    }
  });
}

module.exports = { binary, run };
