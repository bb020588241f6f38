"""Trust takes effect at once: a project's MCP servers, left out while it was
untrusted, start as soon as the person trusts it (``/trust yes``, or the card
before the cell's turn), so the very next call to them works; and nothing
the person did not see starts (a server planted or changed after the card
showed, a trust refused). Real sessions, the real fixture server over
stdio, a scripted model."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core import open_session
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.events import Notice
from mewcode_kernel.core.trust import assess_project
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._mcp import fixture_entry, provider_yaml

ECHO = ("mcp__fx__echo", {"text": "hi"})


def planted(marker: Path) -> dict[str, Any]:
    """A server entry whose start leaves ``marker`` behind."""
    return {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}


def project(tmp: Path, server: ScriptedServer, servers: dict[str, Any]) -> tuple[Path, Path]:
    root, home = tmp / "project", tmp / "home"
    (home / ".mewcode").mkdir(parents=True)
    root.mkdir()
    # the model is the user's own; the servers are the project's (untrusted)
    (home / ".mewcode" / "config.yaml").write_text(provider_yaml(server.base_url))
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return root, home


def result_text(body: dict[str, Any]) -> str:
    [block] = [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    content = block["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


@pytest.fixture(autouse=True)
def _untrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEWCODE_TRUST_PROJECT", raising=False)


async def test_the_card_s_trust_starts_the_servers_before_the_turn(tmp_path: Path) -> None:
    with ScriptedServer([reply(tool_calls=[ECHO]), reply(text="done")]) as server:
        root, home = project(tmp_path, server, {"fx": fixture_entry()})
        async with open_session(root, home=home, env={}) as s:
            assert s.mcp is not None and s.mcp.state_of("fx") is None  # left out
            shown = s.trust
            s.trust_project(shown)  # what the card does on a click
            events = await collect(s.run("echo hi"))
            assert s.mcp.state_of("fx") == "connected"
        server.assert_all_used()
    assert result_text(server.requests[1]) == "echo: hi"  # the first call worked
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert "MCP server 'fx' started: the project is trusted." in notices
    assert not any("not trusted" in n for n in notices)


async def test_trust_yes_starts_them_at_once_and_says_so(tmp_path: Path) -> None:
    with ScriptedServer([]) as server:
        root, home = project(tmp_path, server, {"fx": fixture_entry()})
        async with open_session(root, home=home, env={}) as s:
            result = await run_command(s, "/trust yes")
            assert s.mcp is not None and s.mcp.state_of("fx") == "connected"
            s.tools.refresh()
            assert "mcp__fx__echo" in s.tools
    assert "MCP servers started: fx." in result.markdown


async def test_refusing_trust_starts_nothing_in_any_later_turn(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    script = [reply(text="one"), reply(tool_calls=[("mcp__evil__x", {})]), reply(text="two")]
    with ScriptedServer(script) as server:
        root, home = project(tmp_path, server, {"evil": planted(marker)})
        async with open_session(root, home=home, env={}) as s:
            await collect(s.run("first"))  # "Keep ignoring": nothing is trusted
            await collect(s.run("second"))
            assert s.mcp is not None and s.mcp.state_of("evil") is None
        server.assert_all_used()
    assert not marker.exists()
    assert result_text(server.requests[2]).startswith("Unknown tool 'mcp__evil__x'")


async def test_a_server_planted_after_the_card_showed_does_not_start(tmp_path: Path) -> None:
    """The card shows the settings as the session read them; a server added to
    ``.mcp.json`` before the click is neither approved nor started, in this
    session or the next."""
    marker = tmp_path / "planted"
    with ScriptedServer([reply(text="ok")]) as server:
        root, home = project(tmp_path, server, {"fx": fixture_entry()})
        async with open_session(root, home=home, env={}) as s:
            shown = s.trust
            servers = {"fx": fixture_entry(), "evil": planted(marker)}
            (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
            s.trust_project(shown)
            await collect(s.run("go"))
            assert s.mcp is not None and s.mcp.state_of("fx") == "connected"
            assert s.mcp.state_of("evil") is None
        async with open_session(root, home=home, env={}) as again:
            assert again.mcp is not None and again.mcp.state_of("evil") is None
    assert not marker.exists()
    assert [i.name for i in assess_project(root, home=home).ignored()] == ["evil"]


async def test_a_server_changed_after_the_card_showed_runs_as_shown_or_not_at_all(
    tmp_path: Path,
) -> None:
    """Between the card and the click the server's command is swapped: the
    session starts the definition the person saw (read when it opened), never
    the swapped one; a new session finds the swapped one untrusted."""
    marker = tmp_path / "swapped"
    with ScriptedServer([reply(text="ok")]) as server:
        root, home = project(tmp_path, server, {"fx": fixture_entry()})
        async with open_session(root, home=home, env={}) as s:
            shown = s.trust
            (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"fx": planted(marker)}}))
            s.trust_project(shown)
            await collect(s.run("go"))
            assert s.mcp is not None and s.mcp.state_of("fx") == "connected"
        async with open_session(root, home=home, env={}) as again:
            assert again.mcp is not None and again.mcp.state_of("fx") is None
    assert not marker.exists()
