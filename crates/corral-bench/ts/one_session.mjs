// One session of the official TypeScript MCP SDK against `corral mcp --listen`: 5 calls
// to warm up, then N timed `exec ["true"]` calls; prints the median and p99 in µs.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, count] = process.argv.slice(2);
const n = Number(count || 20);
const client = new Client({ name: "corral-bench", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const times = [];
for (let i = 0; i < n + 5; i++) {
  const started = performance.now();
  const result = await client.callTool({ name: "exec", arguments: { argv: ["true"] } });
  if (result.isError) throw new Error(JSON.stringify(result));
  if (i >= 5) times.push((performance.now() - started) * 1000);
}
times.sort((a, b) => a - b);
const at = (q) => times[Math.round((times.length - 1) * q)];
console.log(`${at(0.5).toFixed(0)} ${at(0.99).toFixed(0)}`);
await client.close();
