"""MCP benchmark: session start with 0, 1 and 5 stdio servers, and the cost
of a tool call through MewCode against the same call made with the SDK.

Run by hand: ``python benchmarks/bench_mcp.py [--runs N] [--calls N]``.

* Start: the time ``async with open_session(...)`` takes to enter (config,
  provider, and every configured server connected and listed), each run in a
  fresh process: *cold* includes importing the ``mcp`` SDK, which only a
  session with servers pays; *warm* is a second session in the same process.
  Printed as seconds and as a ratio to the session with no servers.
* Per call: ``echo`` on one stdio server, called through the MCP tool MewCode
  offers the model (``Tool.call``: restart check, timeout, result conversion)
  and directly with the SDK's ``Client.call_tool`` on a connection of its own,
  alternating; printed as the median per call and the overhead ratio.

The server is ``tests/mcp_server.py`` (the SDK's MCPServer), the one the tests use.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "tests" / "mcp_server.py"

_START = r"""
import asyncio, json, os, statistics, sys, time
from pathlib import Path
from mewcode_kernel.core import open_session

async def session(root):
    start = time.perf_counter()
    async with open_session(root, home=root / "home", env={}, project_trusted=lambda: True) as s:
        took = time.perf_counter() - start
        up = sum(st.state == "connected" for st in s.mcp.statuses()) if s.mcp else 0
    return took, up

async def sdk_alone(server):  # one server with the SDK alone: connect + list_tools
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    with open(os.devnull, "w") as quiet:
        params = StdioServerParameters(command=sys.executable, args=[server])
        start = time.perf_counter()
        async with Client(stdio_client(params, errlog=quiet)) as client:
            await client.list_tools()
            return time.perf_counter() - start

async def main():
    root, server = Path(sys.argv[1]), sys.argv[2]
    cold, up = await session(root)
    warm, sdk = [], []
    for _ in range(3):  # interleaved, so both see the same machine
        warm.append((await session(root))[0])
        if up:
            sdk.append(await sdk_alone(server))
    print(json.dumps({"cold": cold, "warm": statistics.median(warm), "connected": up,
                      "sdk": statistics.median(sdk) if sdk else None}))

asyncio.run(main())
"""


def _project(servers: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"mewcode-bench-mcp-{servers}-"))
    (root / "home").mkdir()
    text = (
        "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
        "    model: m\n    base_url: http://127.0.0.1:9\n    api_key: k\n"
    )
    if servers:
        text += "mcp_servers:\n"
        for i in range(servers):
            text += f"  s{i}: {json.dumps({'command': sys.executable, 'args': [str(SERVER)]})}\n"
    (root / ".mewcode.yaml").write_text(text)
    return root


def bench_start(runs: int) -> None:
    print(f"session start, seconds (median of {runs} fresh processes; warm: median of 3 in each)")
    print(f"{'servers':>8} {'cold':>8} {'warm':>8} {'+cold':>8} {'+warm':>8}")
    base: dict[str, float] = {}
    one = 0.0
    for servers in (0, 1, 5):
        root = _project(servers)
        cold, warm, sdk = [], [], []
        for _ in range(runs):
            out = subprocess.run(
                [sys.executable, "-c", _START, str(root), str(SERVER)],
                capture_output=True,
                text=True,
                check=True,
                cwd=REPO,
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            assert row["connected"] == servers, row
            cold.append(row["cold"])
            warm.append(row["warm"])
            if row["sdk"] is not None:
                sdk.append(row["sdk"])
        c, w = statistics.median(cold), statistics.median(warm)
        if servers == 0:
            base = {"cold": c, "warm": w}
        if servers == 1:
            one, sdk_one = w - base["warm"], statistics.median(sdk)
        print(f"{servers:>8} {c:>8.2f} {w:>8.2f} {c - base['cold']:>8.2f} {w - base['warm']:>8.2f}")
    print(
        "(+: added by the servers. cold: a fresh process, importing the mcp SDK included; "
        "warm: a second session in it)"
    )
    five = w - base["warm"]
    print(f"5 servers at once: {five:.2f} s = {five / (5 * one):.2f} x five one-server starts")
    print(f"one server with the SDK alone (connect + list_tools, warm): {sdk_one:.2f} s")


async def _calls(n: int, quiet: TextIO) -> tuple[list[float], list[float]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from mewcode_kernel.core.config import McpServerConfig
    from mewcode_kernel.core.mcp import McpToolset
    from mewcode_kernel.core.messages import ToolUseBlock
    from mewcode_kernel.core.tools import RunContext

    root = Path(tempfile.mkdtemp(prefix="mewcode-bench-mcp-calls-"))
    config = McpServerConfig(name="fx", type="stdio", command=sys.executable, args=(str(SERVER),))
    ctx = RunContext(root=root, call=ToolUseBlock(id="b", name="mcp__fx__echo", input={}))
    ours: list[float] = []
    direct: list[float] = []
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    direct_client = Client(stdio_client(params, errlog=quiet))
    async with McpToolset({"fx": config}, root=root, env={}) as toolset, direct_client as client:
        [echo] = [t for t in toolset.tools() if t.name == "mcp__fx__echo"]
        for _ in range(20):  # warm both paths up
            await echo.call(ctx, {"text": "warm"})
            await client.call_tool("echo", {"text": "warm"})
        for i in range(n):
            start = time.perf_counter()
            await echo.call(ctx, {"text": f"call {i}"})
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            await client.call_tool("echo", {"text": f"call {i}"})
            direct.append(time.perf_counter() - start)
    return ours, direct


def bench_calls(n: int) -> None:
    with open(os.devnull, "w") as quiet:  # the direct client's server stderr
        ours, direct = asyncio.run(_calls(n, quiet))
    o, d = statistics.median(ours) * 1000, statistics.median(direct) * 1000
    print(f"\nper call over stdio (median of {n}, ms): MewCode tool {o:.2f}, SDK directly {d:.2f}")
    print(f"overhead: {o - d:+.2f} ms per call, ratio {o / d:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per server count")
    parser.add_argument("--calls", type=int, default=300, help="calls per path")
    args = parser.parse_args()
    bench_start(args.runs)
    bench_calls(args.calls)


if __name__ == "__main__":
    main()
