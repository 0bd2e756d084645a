"""The corral-mcp wheel's module, installed in a fresh venv, through both clients it serves.

Run from the workspace with only HOME and a PATH that does not hold the venv's scripts:
`binary()` must find the wheel's `corral` by the install's scripts directory. Prints one
JSON object: `binary`, and the tools pydantic-ai handed its model (`pydantic_ai`) and the
OpenAI Agents SDK listed (`agents`).
"""

import asyncio
import json

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from corral_mcp import binary, corral_server, corral_toolset

seen: dict = {"binary": binary()}


def model(messages, info: AgentInfo) -> ModelResponse:
    seen["pydantic_ai"] = [tool.name for tool in info.function_tools]
    return ModelResponse(parts=[TextPart("done")])


Agent(FunctionModel(model), toolsets=[corral_toolset(workspace=".")]).run_sync("list")


async def agents_sdk():
    async with corral_server(workspace=".") as corral:
        seen["agents"] = [tool.name for tool in await corral.list_tools()]


asyncio.run(agents_sdk())
print(json.dumps(seen))
