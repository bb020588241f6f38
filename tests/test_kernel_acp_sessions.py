# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""One session store for the chat panel and the notebook: a session an ACP
client started continues in a ``%%agent --resume ID`` cell (the model sees
the chat's turn), is listed by ``/sessions``, and can be loaded back over
ACP with the cell's turn replayed; while one side holds it, the other is
told it is in use (one writer at a time)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import RequestError
from acp.helpers import text_block

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._acp import acp_agent
from tests._kernel import (  # noqa: F401
    Kernel,
    jupyter_path,
    kernel,
    kernel_env,
    project,
    running_kernel,
    script,
    server,
)


async def test_a_chat_session_continues_in_a_cell_and_back(
    script: ScriptedServer, project: Path, tmp_path: Path, jupyter_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    script.add(reply(text="Noted: the secret word is pelican."))
    async with acp_agent(project, home) as chat:
        session_id = await chat.start(project)
        await chat.conn.prompt(
            session_id=session_id, prompt=[text_block("Remember the secret word: pelican.")]
        )
        # the chat holds the session: a cell resuming it is told so
        with running_kernel(project, kernel_env(tmp_path / "k1")) as busy:
            refused = busy.run(f"%%agent --resume {session_id}\nWhat was the word?")
            assert refused.status == "error" and "in use" in refused.text
    script.add(reply(text="It was pelican."))
    with running_kernel(project, kernel_env(tmp_path / "k2")) as cell_side:
        listed = cell_side.ok("%agent /sessions")
        assert session_id in listed.text
        cell = cell_side.ok(f"%%agent --resume {session_id}\nWhat was the word?")
        assert f"resumed session {session_id}" in cell.stdout
        assert cell.provenance[0]["session_id"] == session_id
    seen = json.dumps(script.received[-1].body["messages"])
    assert "Remember the secret word: pelican." in seen
    assert "Noted: the secret word is pelican." in seen
    # and back in a chat: the cell's turn is replayed with the chat's
    async with acp_agent(project, home) as again:
        await again.conn.initialize(protocol_version=1)
        await again.conn.load_session(cwd=str(project), session_id=session_id, mcp_servers=[])
        texts = [
            u["content"]["text"]
            for u in again.client.updates(session_id)
            if u["sessionUpdate"] in ("user_message_chunk", "agent_message_chunk")
        ]
    assert texts == [
        "Remember the secret word: pelican.",
        "Noted: the secret word is pelican.",
        "What was the word?",
        "It was pelican.",
    ]


async def test_a_session_a_kernel_holds_cannot_be_loaded_over_acp(
    kernel: Kernel, script: ScriptedServer, project: Path, tmp_path: Path
) -> None:
    script.add(reply(text="Held by the kernel."))
    session_id = kernel.ok("%%agent --new\nhello").provenance[0]["session_id"]
    home = tmp_path / "home"
    home.mkdir()
    async with acp_agent(project, home) as chat:
        await chat.conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as caught:
            await chat.conn.load_session(cwd=str(project), session_id=session_id, mcp_servers=[])
        assert "in use" in json.dumps(caught.value.data)
