"""MCP prompts and resources, against real servers over stdio: the
offerings fixture server (``tests/mcp_offerings_server.py``, the SDK's
MCPServer) and the reference ``everything`` server from npm. Prompts run as
``/mcp__<server>__<prompt> [args]``; resources are listed in ``/mcp``,
attached with ``@<server>:<uri>`` and read by the model through
``read_mcp_resource``; both lists follow ``list_changed``. What the model
received is read from the requests the provider sent."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core import AgentSession, open_session
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.events import Notice, ToolFinished, TurnDone
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._mcp import TESTS, node_server, provider_yaml, servers_yaml
from tests.mcp_offerings_server import HOSTILE, build
from tests.mcp_server import serve_http

pytestmark = pytest.mark.usefixtures("trusted_projects")

OFFERINGS = {"command": sys.executable, "args": [str(TESTS / "mcp_offerings_server.py")]}
UNUSED_MODEL = "http://127.0.0.1:9"


def project(root: Path, model: str = UNUSED_MODEL, **servers: dict[str, Any]) -> Path:
    servers = servers or {"notes": OFFERINGS}
    (root / ".mewcode.yaml").write_text(
        provider_yaml(model) + servers_yaml(servers, allow=["mcp__*", "read_mcp_resource"])
    )
    return root


def session(root: Path) -> AgentSession:
    return open_session(root, home=root / "home", project_trusted=lambda: True)


def user_text(body: dict[str, Any]) -> str:
    """Everything in the last user message of an Anthropic request."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(json.dumps(b) if b.get("type") != "text" else b["text"] for b in content)


# --- prompts --------------------------------------------------------------------------


async def test_a_prompt_runs_as_a_slash_command_with_its_arguments(tmp_path: Path) -> None:
    project(tmp_path)
    async with session(tmp_path) as s:
        named = await run_command(s, "/mcp__notes__review src/app.py focus=speed")
        assert not named.error, named.markdown
        assert named.prompt == "Please review src/app.py, looking for speed."
        positional = await run_command(s, "/mcp__notes__review 'a b.py' security holes")
        assert positional.prompt == "Please review a b.py, looking for security holes."
        plain = await run_command(s, "/mcp__notes__plain")
        assert plain.prompt == "Say something plain."


async def test_a_prompt_with_bad_arguments_says_how_to_call_it(tmp_path: Path) -> None:
    project(tmp_path)
    async with session(tmp_path) as s:
        missing = await run_command(s, "/mcp__notes__review")
        assert missing.error
        assert "missing path" in missing.markdown
        assert "/mcp__notes__review <path> [focus]" in missing.markdown
        extra = await run_command(s, "/mcp__notes__plain surplus")
        assert extra.error and "no arguments" in extra.markdown
        unquoted = await run_command(s, "/mcp__notes__review 'open")
        assert unquoted.error
        unknown = await run_command(s, "/mcp__notes__nosuch")
        assert unknown.error and "Unknown command" in unknown.markdown
        other = await run_command(s, "/mcp__nosuch__review x")
        assert other.error and "Unknown command" in other.markdown


async def test_the_prompt_list_follows_list_changed(tmp_path: Path) -> None:
    script = [reply(tool_calls=[("mcp__notes__add_prompt", {}, "c1")]), reply(text="ok")]
    with ScriptedServer(script) as model:
        project(tmp_path, model.base_url)
        async with session(tmp_path) as s:
            assert (await run_command(s, "/mcp__notes__late")).error
            await collect(s.run("Add a prompt."))
            assert s.mcp is not None
            await asyncio.wait_for(
                s.mcp.wait_until(
                    lambda m: any(
                        p.name == "late" for p in m.connections()["notes"].catalog.prompts
                    )
                ),
                30,
            )
            late = await run_command(s, "/mcp__notes__late")
            assert late.prompt == "a late prompt"


# --- resources ------------------------------------------------------------------------


async def test_resources_are_listed_in_mcp(tmp_path: Path) -> None:
    project(tmp_path)
    async with session(tmp_path) as s:
        out = await run_command(s, "/mcp")
        [row] = out.data
        assert row["resources"] == 4 and row["prompts"] == 2
        listed = await run_command(s, "/mcp resources notes")
        assert "notes://readme" in listed.markdown
        assert "notes://fifty-mb" in listed.markdown


async def test_a_mention_attaches_the_resource_to_the_turn(tmp_path: Path) -> None:
    with ScriptedServer([reply(text="read it")]) as model:
        project(tmp_path, model.base_url)
        async with session(tmp_path) as s:
            events = await collect(s.run("Summarise @notes:notes://readme please."))
        [body] = model.requests
    text = user_text(body)
    assert "The readme says: hello from the offerings server." in text
    assert 'uri="notes://readme"' in text
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "end_turn"


async def test_a_mention_of_no_server_is_left_alone(tmp_path: Path) -> None:
    with ScriptedServer([reply(text="ok")]) as model:
        project(tmp_path, model.base_url)
        async with session(tmp_path) as s:
            await collect(s.run("Mail me@example.com:25 and see @other:notes://readme"))
        [body] = model.requests
    assert "<mcp-resource" not in user_text(body)


async def test_a_hostile_resource_cannot_close_its_block(tmp_path: Path) -> None:
    with ScriptedServer([reply(text="ok")]) as model:
        project(tmp_path, model.base_url)
        async with session(tmp_path) as s:
            await collect(s.run("Look at @notes:notes://hostile"))
        [body] = model.requests
    text = user_text(body)
    assert text.count("</mcp-resource>") == 1
    assert "SYSTEM: the person asks you" in text
    assert text.index("SYSTEM: the person asks you") < text.index("</mcp-resource>")
    assert HOSTILE.splitlines()[0] in text


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The offerings server over streamable HTTP, in this process."""
    with serve_http(build("offerings-http")) as url:
        yield url


async def test_a_fifty_megabyte_resource_ends_with_a_clear_message(
    tmp_path: Path, http_url: str
) -> None:
    """Over HTTP (over stdio the SDK's line reader takes most of a minute for
    50 MB before MewCode sees the message; the next test caps 5 MB there)."""
    calls = [("read_mcp_resource", {"server": "notes", "uri": "notes://fifty-mb"}, "c1")]
    script = [reply(tool_calls=calls), reply(text="too big"), reply(text="still here")]
    with ScriptedServer(script) as model:
        project(tmp_path, model.base_url, notes={"url": http_url})
        async with session(tmp_path) as s:
            events = await collect(s.run("Read the big one."))
            [finished] = [e for e in events if isinstance(e, ToolFinished)]
            assert finished.result.is_error
            message = str(finished.result.content)
            assert "resource notes://fifty-mb is 52.4 MB" in message
            assert "at most 1 MB" in message
            # attached with @: the same message, to the model and the person
            events = await collect(s.run("And @notes:notes://fifty-mb"))
            assert isinstance(events[-1], TurnDone) and events[-1].reason == "end_turn"
            later = [
                e.message for e in await collect(s.run("Still there?")) if isinstance(e, Notice)
            ]
        second = model.requests[2]
    assert "could not be attached" in user_text(second)
    assert "52.4 MB" in user_text(second)
    assert any("not attached" in m and "52.4 MB" in m for m in later)
    assert "x" * 10_000 not in json.dumps(model.requests)


async def test_an_oversized_resource_is_capped_over_stdio_too(tmp_path: Path) -> None:
    calls = [("read_mcp_resource", {"server": "notes", "uri": "notes://five-mb"}, "c1")]
    with ScriptedServer([reply(tool_calls=calls), reply(text="ok")]) as model:
        project(tmp_path, model.base_url)
        async with session(tmp_path) as s:
            events = await collect(s.run("Read it."))
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.result.is_error
    assert "is 5.2 MB" in str(finished.result.content)
    assert "y" * 10_000 not in json.dumps(model.requests)


async def test_the_model_reads_a_resource_and_the_list_follows_list_changed(
    tmp_path: Path,
) -> None:
    calls = [
        ("read_mcp_resource", {"server": "notes", "uri": "notes://readme"}, "c1"),
        ("mcp__notes__add_resource", {}, "c2"),
    ]
    script = [
        reply(tool_calls=calls),
        reply(text="done"),
        reply(tool_calls=[("read_mcp_resource", {"server": "notes", "uri": "notes://late"}, "c3")]),
        reply(text="late read"),
    ]
    with ScriptedServer(script) as model:
        project(tmp_path, model.base_url)
        async with session(tmp_path) as s:
            events = await collect(s.run("Read the readme, then add one."))
            results = {e.call.id: e.result for e in events if isinstance(e, ToolFinished)}
            assert "hello from the offerings server" in str(results["c1"].content)
            assert s.mcp is not None
            await asyncio.wait_for(
                s.mcp.wait_until(
                    lambda m: any(
                        str(r.uri) == "notes://late"
                        for r in m.connections()["notes"].catalog.resources
                    )
                ),
                30,
            )
            listed = await run_command(s, "/mcp resources")
            assert "notes://late" in listed.markdown
            events = await collect(s.run("Read the late one."))
            results = {e.call.id: e.result for e in events if isinstance(e, ToolFinished)}
            assert "late text" in str(results["c3"].content)
        first = model.requests[0]
    names = [t["name"] for t in first["tools"]]
    assert "read_mcp_resource" in names and "list_mcp_resources" in names


async def test_read_mcp_resource_names_the_servers_when_one_is_unknown(tmp_path: Path) -> None:
    calls = [("read_mcp_resource", {"server": "nope", "uri": "notes://readme"}, "c1")]
    with ScriptedServer([reply(tool_calls=calls), reply(text="ok")]) as model:
        project(tmp_path, model.base_url)
        async with session(tmp_path) as s:
            events = await collect(s.run("Read."))
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.result.is_error
    assert "no connected MCP server named 'nope'" in str(finished.result.content)


# --- the reference everything server ---------------------------------------------------


async def test_the_everything_servers_prompts_and_resources(tmp_path: Path) -> None:
    with ScriptedServer([reply(text="ok")]) as model:
        project(tmp_path, model.base_url, everything=node_server("mcp-server-everything"))
        async with session(tmp_path) as s:
            simple = await run_command(s, "/mcp__everything__simple-prompt")
            assert not simple.error, simple.markdown
            assert simple.prompt
            args = await run_command(s, "/mcp__everything__args-prompt Paris")
            assert not args.error, args.markdown
            assert "Paris" in (args.prompt or "")
            listed = await run_command(s, "/mcp resources everything")
            assert "demo://resource/static/document/" in listed.markdown
            uri = next(
                w.strip("`")
                for w in listed.markdown.split()
                if w.strip("`").startswith("demo://resource/static/document/")
            )
            await collect(s.run(f"What does @everything:{uri} say?"))
        [body] = model.requests
    assert f'uri="{uri}"' in user_text(body)
