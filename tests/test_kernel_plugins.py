# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""A plugin installed from a local marketplace (a git repository made here)
and used from notebook cells of a real ``mewcode`` kernel, its model
scripted over the Anthropic wire format: ``/plugin marketplace add``,
``/plugin install``, its skill (``/demo:greet``) and command
(``/demo:shout``, ``$ARGUMENTS``) running turns, its hook firing with
``CLAUDE_PLUGIN_ROOT``, and in the next session its agent (``demo:helper``)
and its MCP server (``mcp__plugin_demo_fx__echo``)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import (
    Kernel,
    anthropic_openai_config,
    jupyter_path,  # noqa: F401
    kernel_env,
    running_kernel,
    server,  # noqa: F401
)
from tests._plugins import make_marketplace, make_plugin

FIXTURE_SERVER = Path(__file__).resolve().parent / "mcp_server.py"


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("plugins-project")
    (root / ".mewcode.yaml").write_text(
        anthropic_openai_config(server.base_url, server.openai_base_url)
    )
    market = tmp_path_factory.mktemp("market")
    plugin = make_plugin(
        market / "plugins" / "demo",
        "demo",
        skills={"greet": "Greet $ARGUMENTS warmly."},
        commands={"shout": "---\ndescription: Shout it\n---\nShout $ARGUMENTS loudly.\n"},
        agents={"helper": "You are the demo helper. Answer in one word."},
        hooks={
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh"'}
                    ]
                }
            ]
        },
        servers={"fx": {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"]}},
    )
    (plugin / "hooks" / "mark.sh").write_text(
        'echo "$CLAUDE_PLUGIN_ROOT" >> "$CLAUDE_PROJECT_DIR/hook-fired"\n'
    )
    shutil.copy(FIXTURE_SERVER, plugin / "server.py")
    make_marketplace(market, "local", [{"name": "demo", "source": "./plugins/demo"}], git=True)
    home = tmp_path_factory.mktemp("home")
    return {"root": root, "market": market, "home": home}


@pytest.fixture(scope="module")
def env(places: dict[str, Path]) -> dict[str, str]:
    return kernel_env(places["home"], MEWCODE_HEADLESS_APPROVAL="allow")


@pytest.fixture(scope="module")
def first(places: dict[str, Path], env: dict[str, str], jupyter_path: Path) -> Iterator[Kernel]:
    with running_kernel(places["root"], env) as k:
        yield k


def turn_text(body: dict[str, Any]) -> str:
    users = [m for m in body["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    blocks = [content] if isinstance(content, str) else content
    return "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict))


def installed(places: dict[str, Path]) -> Path:
    return places["home"] / ".mewcode" / "plugins" / "cache" / "local" / "demo"


def test_install_then_use_the_skill_command_and_hook(
    first: Kernel, places: dict[str, Path], server: ScriptedServer
) -> None:
    added = first.ok(f"/plugin marketplace add {places['market']}")
    assert "Added marketplace `local` (1 plugin(s))" in added.text
    done = first.ok("/plugin install demo@local")
    assert "Installed `demo@local`" in done.text
    listed = first.ok("/plugin list")
    assert "`demo`" in listed.text and "/plugin install" in listed.text
    server.add(reply(text="Hello, Ada!"))
    first.ok("/demo:greet Ada")
    assert "Greet Ada warmly." in turn_text(server.requests[-1])
    server.add(reply(text="HI!"))
    first.ok("/demo:shout hi")
    assert "Shout hi loudly." in turn_text(server.requests[-1])
    fired = (places["root"] / "hook-fired").read_text().split()
    assert fired == [str(installed(places))] * 2  # the plugin's hook, once per turn


def test_the_next_session_has_its_agent_and_mcp_server(
    first: Kernel,
    places: dict[str, Path],
    env: dict[str, str],
    server: ScriptedServer,
    jupyter_path: Path,
) -> None:
    first.close()  # its agents and MCP servers start with the next session
    with running_kernel(places["root"], env) as k:
        server.add(
            reply(tool_calls=[("mcp__plugin_demo_fx__echo", {"text": "from the plugin"})]),
            reply(text="echoed"),
        )
        k.ok("%%agent --new\nEcho through the plugin's server.")
        result = json.dumps(server.requests[-1]["messages"][-1])
        assert "echo: from the plugin" in result
        server.add(
            reply(
                tool_calls=[
                    (
                        "Agent",
                        {
                            "description": "ask",
                            "prompt": "Say yes.",
                            "subagent_type": "demo:helper",
                        },
                    )
                ]
            ),
            reply(text="Yes."),
            reply(text="The helper said yes."),
        )
        k.ok("%%agent\nAsk the demo helper.")
        child = json.dumps(server.requests[-2]["system"])
        assert "You are the demo helper." in child
        assert "Yes." in json.dumps(server.requests[-1]["messages"][-1])
        agents = k.ok("/agents")
        assert "demo:helper" in agents.text
