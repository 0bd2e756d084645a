"""corral's MCP server for Python agents.

The wheel installs the `corral` binary as a script of the environment; this module finds
it and starts `corral mcp --workspace WORKSPACE` over stdio for the clients Python agents
use: `corral_toolset` for pydantic-ai (its `MCPToolset`) and `corral_server` for the
OpenAI Agents SDK (its `MCPServerStdio`). Neither client is a dependency: install the one
you use (`pip install "corral-mcp[pydantic-ai]"` or `"corral-mcp[agents]"`).
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["binary", "server_args", "corral_toolset", "corral_server"]


def binary() -> str:
    """The `corral` this environment installed (its scripts directory), else the first on
    `PATH`. An editable install (`pip install -e`, `maturin develop`) does not put the
    binary there; then build it and put it on `PATH`."""
    installed = Path(sysconfig.get_path("scripts")) / "corral"
    if installed.is_file() and os.access(installed, os.X_OK):
        return str(installed)
    found = shutil.which("corral")
    if found is not None:
        return found
    raise FileNotFoundError(
        f"no corral binary in {installed.parent} or on PATH: an editable install of "
        "corral-mcp does not install it; build it with `cargo install --locked --path "
        "crates/corral-cli` (or install the corral-mcp wheel itself) and try again"
    )


def server_args(workspace: str | os.PathLike[str] = ".", extra: Sequence[str] = ()) -> list[str]:
    """The arguments that start corral's MCP server on `workspace`."""
    return ["mcp", "--workspace", os.fspath(workspace), *extra]


def corral_toolset(
    workspace: str | os.PathLike[str] = ".",
    *,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    **toolset: Any,
):
    """A pydantic-ai toolset of corral's tools on `workspace` (`Agent(...,
    toolsets=[corral_toolset(workspace='.')])`). `args` go to `corral mcp` (`["--state",
    DIR]`, `["--file-tools"]`), `env` to its environment, the rest to `MCPToolset`."""
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    transport = StdioTransport(binary(), server_args(workspace, args), env=dict(env) if env else None)
    return MCPToolset(transport, **toolset)


def corral_server(
    workspace: str | os.PathLike[str] = ".",
    *,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    **server: Any,
):
    """An OpenAI Agents SDK MCP server of corral's tools on `workspace` (`async with
    corral_server(workspace='.') as corral: Agent(..., mcp_servers=[corral])`). `args` go
    to `corral mcp`, `env` to its environment, the rest to `MCPServerStdio`."""
    from agents.mcp import MCPServerStdio

    params: dict[str, Any] = {"command": binary(), "args": server_args(workspace, args)}
    if env:
        params["env"] = dict(env)
    server.setdefault("name", "corral")
    return MCPServerStdio(params=params, **server)
