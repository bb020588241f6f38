"""A real stdio MCP server from npm that keeps its state in its package folder
(``@modelcontextprotocol/server-memory``, started the way its README says:
``npx -y``), in the OS sandbox with default settings (issue 24, item 2).

``npx`` installs into the server's own cache folder (``npm_config_cache``),
so the package folder, and the memory file the server writes beside its
code, is writable and kept: the knowledge graph is there in the next
session. The user's own npm cache is never written, and another server
cannot see this one's folder."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.core import open_session
from mewcode_kernel.core.events import Notice
from mewcode_kernel.core.sandbox import cache_owner
from mewcode_kernel.core.sandbox.caches import CACHE_DIR
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._mcp import NO_SANDBOX, provider_yaml, sandbox_works, servers_yaml
from tests.test_mcp import text_of, tool_results

pytestmark = pytest.mark.usefixtures("trusted_projects")

#: the version tests/mcp_reference pins for the other reference servers
MEMORY = "@modelcontextprotocol/server-memory@2026.8.31"
NPX = shutil.which("npx")


@pytest.fixture
def place() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="mewcode-memory-", dir="/var/tmp"))
    (base / "project").mkdir()
    (base / "home").mkdir()
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def configure(root: Path, server: ScriptedServer) -> None:
    entry = {"command": NPX, "args": ["-y", MEMORY], "connect_timeout": 180}
    (root / ".mewcode.yaml").write_text(
        provider_yaml(server.base_url) + servers_yaml({"memory": entry}, allow=["mcp__memory__*"])
    )


async def run_turn(root: Path, home: Path, server: ScriptedServer, calls: list) -> dict:
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    server.add(reply(tool_calls=calls), reply(text="ok"))
    async with open_session(root, home=home, env=env, mode="bypassPermissions") as s:
        assert s.sandbox.active
        await collect(s.run("Remember this."))
    return tool_results(server.requests[-1])


async def test_server_memory_keeps_its_graph_in_its_own_cache_folder(place: Path) -> None:
    root, home = place / "project", place / "home"
    if NPX is None:
        pytest.fail("npx is needed (Debian: apt-get install -y npm)")
    if not sandbox_works(root):
        pytest.skip(NO_SANDBOX)
    entity = {"name": "Ada", "entityType": "person", "observations": ["writes notebooks"]}
    with ScriptedServer() as server:
        configure(root, server)
        made = await run_turn(
            root, home, server, [("mcp__memory__create_entities", {"entities": [entity]}, "c1")]
        )
        assert "Ada" in text_of(made["c1"]) and not made["c1"].get("is_error"), made
        read = await run_turn(root, home, server, [("mcp__memory__read_graph", {}, "c2")])
    graph = text_of(read["c2"])
    assert "writes notebooks" in graph, graph
    folder = home / ".mewcode" / CACHE_DIR / cache_owner("mcp", "project", root=root, name="memory")
    stored = [p for p in folder.rglob("memory.json*") if "server-memory" in str(p)]
    assert stored, sorted(str(p) for p in folder.rglob("*"))[:20]
    assert "Ada" in stored[0].read_text()
    assert not (home / ".npm").exists() and not (home / ".cache").exists()
    assert json.loads(stored[0].read_text().splitlines()[0])["name"] == "Ada"


async def test_a_server_refused_by_the_sandbox_is_told_the_setting(place: Path) -> None:
    """A server that keeps its state outside the folders it may write fails to
    start; the notice quotes the refusal and names the setting."""
    root, home = place / "project", place / "home"
    if not sandbox_works(root):
        pytest.skip(NO_SANDBOX)
    state = home / ".local" / "share" / "srv"
    state.mkdir(parents=True)
    script = f"open({str(state / 'graph.json')!r}, 'w')"
    entry = {"command": sys.executable, "args": ["-c", script], "connect_timeout": 30}
    with ScriptedServer([reply(text="ok")]) as server:
        (root / ".mewcode.yaml").write_text(
            provider_yaml(server.base_url) + servers_yaml({"stateful": entry})
        )
        env = {"PATH": os.environ["PATH"], "HOME": str(home)}
        async with open_session(root, home=home, env=env) as s:
            events = await collect(s.run("hi"))
    said = " ".join(e.message for e in events if isinstance(e, Notice))
    assert "MCP server 'stateful' could not be started" in said, said
    assert "Read-only file system" in said and "sandbox.allow_write" in said, said
    assert not (state / "graph.json").exists()
