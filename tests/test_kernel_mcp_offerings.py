# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""MCP prompts, resources and elicitation from notebook cells in a real
``mewcode`` kernel, with the reference ``everything`` server (npm) and a
scripted model: a prompt runs as ``%agent /mcp__everything__args-prompt``,
``/mcp resources`` lists what the server offers, ``@everything:<uri>``
attaches a resource to the cell's turn, and the server's form arrives as a
card the notebook answers over its comm (a click as JupyterLab sends it);
a client without widgets declines it. OAuth's login card is a cell too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import (  # noqa: F401
    Kernel,
    anthropic_openai_config,
    jupyter_path,
    kernel,
    script,
    server,
)
from tests._mcp import node_server, servers_yaml
from tests.oauth_server import OAuthWorld, oauth_world

BOUND = 120


@pytest.fixture(scope="module")
def world() -> Iterator[OAuthWorld]:
    with oauth_world() as w:
        yield w


@pytest.fixture(scope="module")
def project(
    tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer, world: OAuthWorld
) -> Path:
    root = tmp_path_factory.mktemp("project")
    servers = {
        "everything": {**node_server("mcp-server-everything", "stdio"), "timeout": 20},
        "remote": {"url": world.url, "connect_timeout": 10},
    }
    (root / ".mewcode.yaml").write_text(
        anthropic_openai_config(server.base_url, server.openai_base_url)
        + servers_yaml(servers, allow=["mcp__everything__*"])
    )
    return root


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", json.dumps(b)) for b in content)


def is_form(msg: dict[str, Any]) -> bool:
    state = msg["content"].get("data", {}).get("state", {})
    return msg["msg_type"] == "comm_open" and "fields" in state and "decided" in state


def test_a_prompt_runs_from_a_cell(kernel: Kernel, script: ScriptedServer) -> None:
    kernel.ok("%agent /mcp", timeout=BOUND)  # the session opens, its servers start
    script.add(reply(text="Paris it is."))
    cell = kernel.ok("%agent /mcp__everything__args-prompt Paris", timeout=BOUND)
    assert "Paris" in last_user_text(script.received[-1].body)
    assert "Paris it is." in cell.text


def test_resources_are_listed_and_attached_from_a_cell(
    kernel: Kernel, script: ScriptedServer
) -> None:
    listed = kernel.ok("%agent /mcp resources everything", timeout=BOUND)
    uri = next(
        w.strip("`")
        for w in listed.text.split()
        if w.strip("`").startswith("demo://resource/static/document/")
    )
    script.add(reply(text="Read it."))
    kernel.ok(f"%%agent\nWhat does @everything:{uri} say?", timeout=BOUND)
    assert f'uri="{uri}"' in last_user_text(script.received[-1].body)


def test_a_servers_form_is_answered_on_its_card(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(
        reply(tool_calls=[("mcp__everything__trigger-elicitation-request", {}, "e1")]),
        reply(text="Thanks for the answers."),
    )
    msg_id = kernel.execute("%%agent\nAsk me for my details.", allow_stdin=True)
    seen = kernel.wait_for(msg_id, is_form, timeout=BOUND)
    opened = seen[-1]["content"]
    fields = json.loads(opened["data"]["state"]["fields"])
    assert "name" in [f["name"] for f in fields]
    values = {"name": "Ada Lovelace", "untitledMultipleSelectEnum": ["Piano"]}
    decision = {"event": "decide", "action": "accept", "values": values}
    content = {"comm_id": opened["comm_id"], "data": {"method": "custom", "content": decision}}
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_msg", content))
    cell = kernel.collect(msg_id, timeout=BOUND)
    assert cell.status == "ok", cell.text
    result = json.dumps(script.received[-1].body["messages"][-1]["content"])
    assert "Ada Lovelace" in result


def test_a_headless_cell_declines_the_servers_form(kernel: Kernel, script: ScriptedServer) -> None:
    """nbclient, ``jupyter execute``: no stdin, nobody to fill in a form."""
    script.add(
        reply(tool_calls=[("mcp__everything__trigger-elicitation-request", {}, "e2")]),
        reply(text="Declined, fine."),
    )
    cell = kernel.ok("%%agent\nAsk me again.", timeout=BOUND)
    assert "nobody can answer here" in cell.text and "declined" in cell.text
    result = json.dumps(script.received[-1].body["messages"][-1]["content"])
    assert "decline" in result


def test_the_oauth_login_is_a_card_with_the_link(kernel: Kernel, world: OAuthWorld) -> None:
    table = kernel.ok("%agent /mcp", timeout=BOUND).text
    assert "not logged in" in table
    card = kernel.ok("%agent /mcp login remote", timeout=BOUND)
    assert "authorization link" in card.text
    assert "http://127.0.0.1:" in card.text and "/authorize?" in card.text
    assert not world.provider.issued  # nobody opened the link: no token
