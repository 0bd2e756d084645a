"""The official MCP Python client against `corral mcp`, reading only `content`.

argv[1:]: the server command. Reads tool calls as JSON lines on stdin; for each, prints one
JSON line: the text of the result's `content` blocks, `isError`, and the
`structuredContent` (which the SDK has validated against the tool's `outputSchema`).
The server's environment is the SDK's default one (HOME, PATH, …), as for any user.

A call may also say, as an agent's loop would decide:
- `"handle_of": K`: its `handle` argument is the one call K started;
- `"until": TEXT`: it is made again (a poll) until what all its answers said holds TEXT,
  for at most 20 s; the line printed holds all of it;
- `"unless": [K, TEXT]`: it is not made if call K's text holds TEXT already (printed as
  `{"skipped": true}`).
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
            init = await session.initialize()
            tools = await session.list_tools()
            listed = {
                "tools": sorted(t.name for t in tools.tools),
                "instructions": init.instructions,
            }
            print(json.dumps(listed), flush=True)
            answers = []
            for call in calls:
                args = dict(call["args"])
                unless = call.get("unless")
                if unless and unless[1] in answers[unless[0]].get("text", ""):
                    answers.append({"skipped": True})
                    print(json.dumps(answers[-1]), flush=True)
                    continue
                if "handle_of" in call:
                    args["handle"] = answers[call["handle_of"]]["structured"]["handle"]
                deadline = asyncio.get_running_loop().time() + 20
                text = ""
                while True:
                    result = await session.call_tool(call["tool"], args)
                    text += "\n".join(c.text for c in result.content if c.type == "text")
                    until = call.get("until")
                    if until is None or until in text or result.is_error:
                        break
                    if asyncio.get_running_loop().time() > deadline:
                        break
                answers.append(
                    {
                        "text": text,
                        "is_error": result.is_error,
                        "structured": result.structured_content,
                    }
                )
                print(json.dumps(answers[-1]), flush=True)


asyncio.run(main())
