// The official TypeScript MCP SDK against `corral mcp`: one session over Streamable HTTP
// and one over stdio (the same server's binary, the same workspace), alternating in every
// round: a timed `exec ["true"]` and a timed `ping` on each, after 10 rounds to warm up.
// Prints the medians and p99s in µs: HTTP call, stdio call, HTTP ping, stdio ping (the
// ping is what the client's transport itself costs a request).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [url, count, corral, workspace] = process.argv.slice(2);
const rounds = Number(count || 200);
const http = new Client({ name: "corral-bench", version: "1" });
// The server's bearer token, from the environment, as a client's configuration reads it.
const headers = { Authorization: `Bearer ${process.env.CORRAL_BENCH_TOKEN}` };
await http.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
const stdio = new Client({ name: "corral-bench", version: "1" });
await stdio.connect(
  new StdioClientTransport({
    command: corral,
    args: ["mcp", "--workspace", workspace],
    env: { ...process.env },
    stderr: "ignore",
  }),
);
const call = async (client) => {
  const result = await client.callTool({ name: "exec", arguments: { argv: ["true"] } });
  if (result.isError) throw new Error(JSON.stringify(result));
};
const series = { httpCall: [], stdioCall: [], httpPing: [], stdioPing: [] };
const timed = async (what, f, keep) => {
  const started = performance.now();
  await f();
  if (keep) series[what].push((performance.now() - started) * 1000);
};
for (let i = 0; i < rounds + 10; i++) {
  const keep = i >= 10;
  await timed("httpCall", () => call(http), keep);
  await timed("stdioCall", () => call(stdio), keep);
  await timed("httpPing", () => http.ping(), keep);
  await timed("stdioPing", () => stdio.ping(), keep);
}
const at = (times, q) => {
  times.sort((a, b) => a - b);
  return times[Math.round((times.length - 1) * q)].toFixed(0);
};
console.log(
  Object.values(series)
    .map((times) => `${at(times, 0.5)} ${at(times, 0.99)}`)
    .join(" "),
);
await http.close();
await stdio.close();
