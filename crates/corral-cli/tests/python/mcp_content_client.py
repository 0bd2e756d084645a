"""The official MCP Python client against `corral mcp`, reading only `content`.

argv[1:]: the server command. Reads tool calls as JSON lines on stdin; for each, prints one
JSON line: the text of the result's `content` blocks, `isError`, and the
`structuredContent` (which the SDK has validated against the tool's `outputSchema`).
The server's environment is the SDK's default one (HOME, PATH, …), as for any user.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    server = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    calls = [json.loads(line) for line in sys.stdin if line.strip()]
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            print(json.dumps({"tools": sorted(t.name for t in tools.tools)}), flush=True)
            for call in calls:
                result = await session.call_tool(call["tool"], call["args"])
                text = "\n".join(c.text for c in result.content if c.type == "text")
                print(
                    json.dumps(
                        {
                            "text": text,
                            "is_error": result.is_error,
                            "structured": result.structured_content,
                        }
                    ),
                    flush=True,
                )


asyncio.run(main())
