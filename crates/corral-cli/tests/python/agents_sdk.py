"""The README's OpenAI Agents SDK snippet, run as written up to the model.

The snippet (argv[1] is the README) starts corral through `MCPServerStdio` from the
workspace, with `corral` on PATH; where it would ask the model, the run lists the tools
the agent was given instead (no provider is reachable here). Prints one JSON object:
`tools`, the names the server listed to the SDK.
"""

import asyncio
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import agents

readme = Path(sys.argv[1]).read_text()
snippet = re.search(r"\*\*OpenAI Agents SDK\*\*.*?```python\n(.*?)```", readme, re.S).group(1)
seen: dict = {}


async def listing_run(agent, prompt, **kwargs):
    """In place of the model: what the agent's MCP servers offer it."""
    names = []
    for server in agent.mcp_servers:
        names += [tool.name for tool in await server.list_tools()]
    seen["tools"] = names
    return SimpleNamespace(final_output="listed")


agents.Runner.run = listing_run
namespace: dict = {}
exec(snippet, namespace)
asyncio.run(namespace["main"]())
print(json.dumps(seen))
