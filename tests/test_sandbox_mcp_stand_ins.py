"""A long-lived stdio MCP server in the OS sandbox: while it runs, the
protected paths that do not exist yet have their read-only stand-ins (the
server cannot create them); once the session closes and the server stops,
the stand-ins are gone. Real server, real bubblewrap."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._mcp import NO_SANDBOX, fixture_entry, sandbox_works
from tests.test_mcp import project, session, text_of, tool_results

pytestmark = pytest.mark.usefixtures("trusted_projects")


async def test_a_servers_stand_ins_live_as_long_as_the_server(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    if not sandbox_works(root):
        pytest.skip(NO_SANDBOX)
    calls = [
        ("mcp__fx__write_text", {"path": str(root / ".mcp.json"), "text": "{}"}, "mcp"),
        ("mcp__fx__write_text", {"path": str(root / ".envrc"), "text": "evil"}, "envrc"),
        ("mcp__fx__write_text", {"path": str(root / "notes.txt"), "text": "ok"}, "notes"),
    ]
    seen: list[str] = []
    with ScriptedServer([reply(tool_calls=calls), reply(text="ok")]) as server:
        project(root, server, {"fx": fixture_entry()})
        async with session(root, mode="bypassPermissions") as s:
            await collect(s.run("write"))
            seen = sorted(os.listdir(root))  # the server still runs
            box = s.sandbox
        results = tool_results(server.requests[1])
    assert text_of(results["mcp"]).startswith("not written")
    assert text_of(results["envrc"]).startswith("not written")
    assert text_of(results["notes"]) == "written"
    assert {".mcp.json", ".envrc", ".git"} <= set(seen)
    for name in (".mcp.json", ".envrc", ".git"):  # the janitor is done once the server is gone
        await asyncio.wait_for(asyncio.to_thread(box.leases.wait_released, str(root / name)), 60)
    left = set(os.listdir(root))
    assert not left & {".mcp.json", ".envrc", ".git", ".claude", ".agents"}, left
