"""Attacks on the ACP server, through the real process: bytes no library
would send, sessions it did not open, permission answers it did not offer,
a client that vanishes mid-turn, MCP servers a repository could have put
in the client's settings, and stray writes to stdout."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.helpers import text_block
from acp.schema import McpServerStdio

from mewcode_acp.mcp_servers import client_servers
from mewcode_kernel.core.session import SessionStore, load_session
from mewcode_kernel.testing.wire import ScriptedServer, reply, stall_after
from tests._acp import acp_agent, project_with, raw_agent
from tests._mcp import FIXTURE_SERVER

INIT = {"protocolVersion": 1}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s


@pytest.fixture
def project(tmp_path: Path, server: ScriptedServer) -> Path:
    return project_with(tmp_path / "project", server.base_url, server.openai_base_url)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


# --- the wire -------------------------------------------------------------------------

BAD_LINES: list[tuple[bytes, int]] = [
    (b"this is not json\n", -32700),
    (b'{"jsonrpc":"2.0","id":1,"method":"initialize"\n', -32700),  # cut short
    (b'\xff\xfe{"jsonrpc":"2.0"}\n', -32700),  # not UTF-8
    (b"[]\n", -32600),
    (b'[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]\n', -32600),  # a batch
    (b"42\n", -32600),
    (b'"initialize"\n', -32600),
    (b"null\n", -32600),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"initialize","params":{}}\n', -32600),
    (b'{"jsonrpc":"2.0","id":[1],"method":"initialize","params":{}}\n', -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}\n', -32600),
    (b'{"jsonrpc":"2.0","id":7,"method":42,"params":{}}\n', -32600),
    (b'{"jsonrpc":"2.0","id":7,"method":null}\n', -32600),
    (b'{"jsonrpc":"1.0","id":7,"method":"initialize","params":{}}\n', -32600),
    (b'{"id":7,"method":"initialize","params":{}}\n', -32600),
    (b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":[1]}\n', -32602),
    (b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":"x"}\n', -32602),
    (b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}\n', -32602),  # no version
    (b'{"jsonrpc":"2.0","id":7,"method":"session/nope","params":{}}\n', -32601),
    (b'{"jsonrpc":"2.0","id":7,"method":"_mewcode/secrets","params":{}}\n', -32601),
    (b'{"jsonrpc":"2.0","id":7,"method":"session/fork","params":{}}\n', -32601),
]


async def test_every_bad_line_gets_its_error_and_the_connection_goes_on(
    project: Path, home: Path
) -> None:
    async with raw_agent(project, home) as agent:
        for line, code in BAD_LINES:
            await agent.send(line)
            answer = await agent.line()
            assert answer.get("error", {}).get("code") == code, (line, answer)
            assert "result" not in answer
        # responses to requests it never sent, of any shape: dropped without a word
        for stray in (
            b'{"jsonrpc":"2.0","id":99,"result":{}}\n',
            b'{"jsonrpc":"2.0","id":[1],"result":{}}\n',
            b'{"jsonrpc":"2.0","id":{"x":1},"error":{"code":1}}\n',
            b'{"jsonrpc":"2.0","id":5,"result":1,"error":{"code":1}}\n',
            b'{"jsonrpc":"2.0","id":5,"error":"bad"}\n',
            b"\n   \n",
        ):
            await agent.send(stray)
        await agent.request("initialize", INIT, request_id="after")
        answer = await agent.response("after")
        assert answer["result"]["protocolVersion"] == 1
        # a line longer than any message: dropped in pieces, answered, and the next one read
        await agent.send(
            b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":"' + b"a" * (51 << 20)
        )
        await agent.send(b'"}}\n')
        assert (await agent.line())["error"]["code"] == -32600
        await agent.request("initialize", INIT, request_id=3)
        assert (await agent.response(3))["result"]["protocolVersion"] == 1


async def test_a_protocol_version_it_does_not_speak_is_answered_with_its_own(
    project: Path, home: Path
) -> None:
    async with raw_agent(project, home) as agent:
        for n, version in enumerate((0, 2, 65535)):
            await agent.request("initialize", {"protocolVersion": version}, request_id=n)
            assert (await agent.response(n))["result"]["protocolVersion"] == 1


async def test_sessions_it_did_not_open_are_refused(
    project: Path, home: Path, server: ScriptedServer
) -> None:
    server.add(reply(text="first"))
    async with acp_agent(project, home) as other:
        stored = await other.start(project)
        await other.conn.prompt(session_id=stored, prompt=[text_block("hi")])
    async with raw_agent(project, home) as agent:
        await agent.request("initialize", INIT, request_id=0)
        await agent.response(0)
        prompt = [{"type": "text", "text": "hello"}]
        # a stored session this connection did not load, a made-up one, a prefix
        for n, sid in enumerate((stored, "20990101-000000-000000-abcdef", stored[:8], "", "../x")):
            await agent.request("session/prompt", {"sessionId": sid, "prompt": prompt}, 10 + n)
            assert (await agent.response(10 + n))["error"]["code"] == -32602
            await agent.request("session/set_mode", {"sessionId": sid, "modeId": "plan"}, 20 + n)
            assert (await agent.response(20 + n))["error"]["code"] == -32602
        # load takes an exact id of this project only
        for n, sid in enumerate((stored[:8], "../../etc", "/etc/passwd", stored + "/..", "..")):
            params = {"cwd": str(project), "sessionId": sid, "mcpServers": []}
            await agent.request("session/load", params, 30 + n)
            assert "error" in await agent.response(30 + n), sid
        # the project must be an absolute directory
        for n, cwd in enumerate(("relative/dir", str(project / "missing"), str(project) + "\x00x")):
            await agent.request("session/new", {"cwd": cwd, "mcpServers": []}, 40 + n)
            assert (await agent.response(40 + n))["error"]["code"] == -32602
    assert load_session(project, stored).messages  # untouched


async def test_one_turn_at_a_time_per_session(
    project: Path, home: Path, server: ScriptedServer
) -> None:
    stalled, stall = stall_after(3, reply(text="slow answer"))
    server.add(stalled)
    async with acp_agent(project, home) as agent:
        session_id = await agent.start(project)
        first = asyncio.ensure_future(
            agent.conn.prompt(session_id=session_id, prompt=[text_block("one")])
        )
        await asyncio.to_thread(stall.reached.wait, 30)
        with pytest.raises(RequestError) as caught:
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("two")])
        assert caught.value.code == -32600
        stall.release()
        assert (await asyncio.wait_for(first, 60)).stop_reason == "end_turn"


# --- permission answers ---------------------------------------------------------------

WRITE = ("write_file", {"path": "owned.txt", "content": "pwned\n"}, "w1")


def _made_up(answer: str) -> Any:
    return lambda _request: answer


@pytest.mark.parametrize(
    "answer",
    [
        "allow",
        "ALLOW_ONCE",
        "allow_once ",
        "allow_once\u200b",
        "allowonce",
        "yes",
        "selected",
        "reject_once; allow_once",
        "",
    ],
)
async def test_only_an_offered_option_allows(
    project: Path, home: Path, server: ScriptedServer, answer: str
) -> None:
    server.add(reply(tool_calls=[WRITE]), reply(text="ok"))
    async with acp_agent(project, home, answer=_made_up(answer)) as agent:
        session_id = await agent.start(project)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("write")])
        [asked] = agent.client.permission_requests
        assert answer not in {o["optionId"] for o in asked["options"]}
        statuses = [u.get("status") for u in agent.client.updates(session_id)]
        assert "completed" not in statuses and "failed" in statuses
    assert not (project / "owned.txt").exists()


async def test_a_cancelled_answer_and_a_reject_deny(
    project: Path, home: Path, server: ScriptedServer
) -> None:
    server.add(reply(tool_calls=[WRITE]), reply(text="ok"))
    server.add(reply(tool_calls=[WRITE]), reply(text="ok"))
    answers = iter([None, "reject_once"])
    async with acp_agent(project, home, answer=lambda _r: next(answers)) as agent:
        session_id = await agent.start(project)
        for _ in range(2):
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("write")])
        assert len(agent.client.permission_requests) == 2
    assert not (project / "owned.txt").exists()


def _cannot_answer(_request: dict[str, Any]) -> str:
    raise RequestError.method_not_found("session/request_permission")


@pytest.mark.parametrize(("policy", "written"), [("deny", False), ("", False), ("allow", True)])
async def test_a_client_that_cannot_answer_leaves_the_headless_policy(
    project: Path, home: Path, server: ScriptedServer, policy: str, written: bool
) -> None:
    server.add(reply(tool_calls=[WRITE]), reply(text="ok"))
    server.add(reply(tool_calls=[("write_file", {"path": "b.txt", "content": "b"}, "w2")]))
    server.add(reply(text="ok"))
    async with acp_agent(
        project, home, answer=_cannot_answer, MEWCODE_HEADLESS_APPROVAL=policy
    ) as agent:
        session_id = await agent.start(project)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("write")])
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("write b")])
        assert len(agent.client.permission_requests) == 1  # not asked again
    assert (project / "owned.txt").exists() is written
    assert (project / "b.txt").exists() is written
    log = (project / ".mewcode" / "sessions" / session_id / "conversation.jsonl").read_text()
    assert '"by":"headless"' in log.replace(" ", "")


async def test_an_answer_that_breaks_the_protocol_denies(project: Path, home: Path) -> None:
    with ScriptedServer([reply(tool_calls=[WRITE]), reply(text="ok")]) as server:
        root = project_with(project.parent / "p2", server.base_url, server.openai_base_url)
        async with raw_agent(root, home, MEWCODE_HEADLESS_APPROVAL="allow") as agent:
            await agent.request("initialize", INIT, request_id=0)
            await agent.response(0)
            await agent.request("session/new", {"cwd": str(root), "mcpServers": []}, 1)
            session_id = (await agent.response(1))["result"]["sessionId"]
            params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "write"}]}
            await agent.request("session/prompt", params, 2)
            while (asked := await agent.line()).get("method") != "session/request_permission":
                pass
            # an outcome that is no outcome: never an allow, even with the policy on allow
            bad = {"outcome": {"outcome": "selected"}}
            await agent.send(
                json.dumps({"jsonrpc": "2.0", "id": asked["id"], "result": bad}).encode() + b"\n"
            )
            assert (await agent.response(2))["result"]["stopReason"] == "end_turn"
    assert not (root / "owned.txt").exists()


# --- the client goes away -------------------------------------------------------------


async def test_a_client_gone_mid_turn_stops_the_server_with_a_valid_log(
    project: Path, home: Path, server: ScriptedServer
) -> None:
    stalled, stall = stall_after(2, reply(tool_calls=[("read_file", {"path": "x"}, "r1")]))
    server.add(stalled)
    async with raw_agent(project, home) as agent:
        await agent.request("initialize", INIT, request_id=0)
        await agent.response(0)
        await agent.request("session/new", {"cwd": str(project), "mcpServers": []}, 1)
        session_id = (await agent.response(1))["result"]["sessionId"]
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "read x"}]}
        await agent.request("session/prompt", params, 2)
        await asyncio.to_thread(stall.reached.wait, 30)
        assert agent.process.stdin is not None
        agent.process.stdin.close()  # the client is gone
        async with asyncio.timeout(60):
            code = await agent.process.wait()
        stall.release()
        assert code == 0
    stored = load_session(project, session_id)
    assert stored.skipped_lines == 0
    SessionStore.open(project, session_id).close()  # its lock went with the server


# --- MCP servers the client passes ----------------------------------------------------


def _marking_server(marker: Path) -> dict[str, Any]:
    script = f"open({str(marker)!r}, 'w').close(); import runpy; runpy.run_path({str(FIXTURE_SERVER)!r}, run_name='__main__')"
    return {"name": "from-the-repo", "command": sys.executable, "args": ["-c", script], "env": []}


@pytest.mark.parametrize(("trust", "started"), [("", False), ("1", True)])
async def test_a_client_mcp_server_starts_only_in_a_trusted_project(
    project: Path, home: Path, trust: str, started: bool
) -> None:
    # the provider is the user's own: the project itself has nothing to trust, so
    # only the client's server (a repository's .jupyter/mcp_settings.json, say) is at stake
    (home / ".mewcode").mkdir()
    (project / ".mewcode.yaml").replace(home / ".mewcode" / "config.yaml")
    marker = project / "started.marker"  # inside: writable in the sandbox too
    async with acp_agent(project, home, MEWCODE_TRUST_PROJECT=trust) as agent:
        await agent.conn.initialize(protocol_version=1)
        await agent.conn.new_session(
            cwd=str(project), mcp_servers=[McpServerStdio(**_marking_server(marker))]
        )
    assert marker.exists() is started


def test_client_server_names_are_made_valid_and_unique() -> None:
    raw = [
        McpServerStdio(name=n, command="x", args=[], env=[])
        for n in ("../../etc", "a b", "a-b", "", "ünï", "a-b")
    ]
    made = client_servers(raw)
    assert list(made) == ["etc", "a-b", "a-b-2", "server", "n", "a-b-3"]
    assert all(s.scope == "project" and s.trust_item is not None for s in made.values())


# --- stdout belongs to the protocol ---------------------------------------------------

STRAY = r"""
import os, subprocess, sys
from mewcode_acp.framing import take_stdio
pipes = take_stdio()
print("a stray print")
sys.stdout.flush()
os.write(1, b"a stray write\n")
subprocess.run(["sh", "-c", "echo child says hi; cat"], check=True)
os.write(pipes.write_fd, b"PROTOCOL\n")
"""


def test_stray_output_and_children_never_touch_the_protocol_pipes() -> None:
    done = subprocess.run(
        [sys.executable, "-c", STRAY],
        input=b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n',
        capture_output=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"PROTOCOL\n"  # the child's cat read /dev/null, not the message
    assert b"a stray print" in done.stderr and b"child says hi" in done.stderr
