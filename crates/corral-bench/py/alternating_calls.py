"""The official MCP Python client (`mcp`) timing tool calls to several stdio servers in turn.

argv[1]: a JSON file: {"rounds": N, "warmup": W, "servers": [{"name", "command", "args",
"cwd", "env", "tool", "arguments", "setup": [[method, params], ...]}]}. Each server is started
once and its session opened; then, round after round, each server gets one call, so all
of them share the machine's moments alike. Prints one JSON line: per server, every call's
time in microseconds, measured around `ClientSession.call_tool`.
"""

import asyncio
import contextlib
import json
import sys
import time
from typing import Any

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


class OpenParams(types.RequestParams):
    """The params of a request this SDK does not know, sent as given."""

    model_config = {**types.RequestParams.model_config, "extra": "allow"}


async def main() -> None:
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    async with contextlib.AsyncExitStack() as stack:
        sessions = []
        for server in plan["servers"]:
            params = StdioServerParameters(
                command=server["command"],
                args=server["args"],
                cwd=server.get("cwd"),
                env=server.get("env") or None,
            )
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            for method, setup in server.get("setup", []):
                request: types.Request[Any, Any] = types.Request(
                    method=method, params=OpenParams.model_validate(setup)
                )
                await session.send_request(request, types.EmptyResult)
            sessions.append((server, session))
        times: dict[str, list[float]] = {server["name"]: [] for server, _ in sessions}
        for round_ in range(plan["warmup"] + plan["rounds"]):
            for server, session in sessions:
                started = time.perf_counter()
                result = await session.call_tool(server["tool"], server["arguments"])
                took = (time.perf_counter() - started) * 1e6
                if result.is_error:
                    raise SystemExit(f"{server['name']}: {result.content}")
                if round_ >= plan["warmup"]:
                    times[server["name"]].append(took)
        print(json.dumps(times), flush=True)


asyncio.run(main())
