"""Drive `corral mcp --listen` with the official Python MCP SDK over Streamable HTTP.

Usage: mcp_http_client.py SCENARIO URL [ARG]...; the bearer token, if any, is in
CORRAL_TEST_TOKEN, the CA to trust for HTTPS in CORRAL_TEST_CA. Prints one JSON object with what the scenario saw; the Rust test
(tests/mcp_http.rs) judges it.
"""

import json
import os
import sys

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def connect(url):
    token = os.environ.get("CORRAL_TEST_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = create_mcp_http_client(headers=headers)
    ca = os.environ.get("CORRAL_TEST_CA")
    if ca:
        import ssl

        import httpx2

        http = httpx2.AsyncClient(headers=headers, verify=ssl.create_default_context(cafile=ca), timeout=http.timeout)
    return Client(streamable_http_client(url, http_client=http))


def text(result):
    return "\n".join(c.text for c in result.content if getattr(c, "text", None) is not None)


def structured(result):
    return result.structured_content or {}


async def tools(url):
    """The tool list, a foreground call and a background handle polled to its end."""
    async with connect(url) as client:
        listed = await client.list_tools()
        echoed = await client.call_tool("exec", {"argv": ["echo", "hello over http"]})
        started = await client.call_tool("shell_start", {"line": "echo handled && echo done"})
        handle = structured(started)["handle"]
        output = ""
        state = "running"
        for _ in range(100):
            polled = await client.call_tool("shell_poll", {"handle": handle, "wait_ms": 1000})
            output += text(polled)
            state = structured(polled).get("state")
            if state != "running":
                break
        return {
            "protocol": client.protocol_version,
            "tools": sorted(t.name for t in listed.tools),
            "echo": text(echoed),
            "echo_exit": structured(echoed).get("exit_code"),
            "handle": handle,
            "handle_state": state,
            "handle_output": output,
        }


async def cancel(url, marker):
    """A foreground `sleep MARKER` abandoned by the client after a second."""
    async with connect(url) as client:
        with anyio.move_on_after(1.0) as scope:
            await client.call_tool("exec", {"argv": ["sleep", marker]})
        after = await client.call_tool("exec", {"argv": ["echo", "after"]})
        return {"cancelled": scope.cancelled_caught, "after": text(after)}


async def isolation(url, marker):
    """Two sessions at once: the second cannot see or end the first's handle."""
    async with connect(url) as first, connect(url) as second:
        started = await first.call_tool("shell_start", {"line": f"sleep {marker}"})
        handle = structured(started)["handle"]
        polled = await second.call_tool("shell_poll", {"handle": handle})
        killed = await second.call_tool("shell_kill", {"handle": handle})
        still = await first.call_tool("shell_poll", {"handle": handle})
        ended = await first.call_tool("shell_kill", {"handle": handle})
        return {
            "handle": handle,
            "other_poll_error": polled.is_error,
            "other_poll": text(polled),
            "other_kill_error": killed.is_error,
            "owner_state_after": structured(still).get("state"),
            "owner_kill_state": structured(ended).get("state"),
        }


async def vanish(url, marker):
    """Start a background `sleep MARKER` and leave without closing anything."""
    async with connect(url) as client:
        started = await client.call_tool("shell_start", {"line": f"sleep {marker}"})
        print(json.dumps({"handle": structured(started)["handle"]}), flush=True)
        os._exit(0)


async def refused(url):
    """Connecting must fail; say how."""
    try:
        async with connect(url) as client:
            await client.call_tool("exec", {"argv": ["echo", "should not run"]})
    except BaseException as e:  # noqa: BLE001 - any failure is the expected outcome
        return {"refused": True, "error": repr(e)[:500]}
    return {"refused": False}


SCENARIOS = {
    "tools": tools,
    "cancel": cancel,
    "isolation": isolation,
    "vanish": vanish,
    "refused": refused,
}


def main():
    scenario, url, *args = sys.argv[1:]
    seen = anyio.run(SCENARIOS[scenario], url, *args)
    print(json.dumps(seen), flush=True)


if __name__ == "__main__":
    main()
