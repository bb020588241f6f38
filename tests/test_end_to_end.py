"""A multi-tool coding task end to end: config file → real SDK → local server
speaking the wire format → built-in tools on disk → session JSONL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mewcode_kernel.core import open_session
from mewcode_kernel.core.events import ToolFinished, TurnDone
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.session import list_sessions, load_session
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply, status

# the tests' projects are the user's own: their provider on a local server applies
pytestmark = pytest.mark.usefixtures("trusted_projects")

SOURCE = "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0\n"


def task_script() -> list:
    return [
        reply(text="Let me look at the module.", tool_calls=[("read_file", {"path": "stats.py"})]),
        status(529, retry_after=0),  # overloaded once: retried transparently
        reply(
            tool_calls=[
                (
                    "edit_file",
                    {
                        "path": "stats.py",
                        "old_string": "def mean(xs):\n",
                        "new_string": 'def mean(xs):\n    """Arithmetic mean; 0 for an empty list."""\n',
                    },
                )
            ]
        ),
        reply(
            tool_calls=[
                ("bash", {"command": "python3 -c 'import stats; print(stats.mean([1, 2, 3]))'"})
            ]
        ),
        reply(tool_calls=[("grep", {"pattern": "Arithmetic", "output_mode": "content"})]),
        reply(text="Added a docstring to `mean`; it still returns 2.0 for [1, 2, 3]."),
    ]


async def allow(req: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(allow=True)


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
async def test_multi_tool_task_through_real_sdk(tmp_path: Path, protocol: str) -> None:
    (tmp_path / "stats.py").write_text(SOURCE)
    with ScriptedServer(task_script()) as server:
        base_url = server.base_url if protocol == "anthropic" else server.openai_base_url
        (tmp_path / ".mewcode.yaml").write_text(
            f"default_provider: local\nproviders:\n  local:\n    protocol: {protocol}\n"
            f"    model: test-model\n    base_url: {base_url}\n    api_key: ${{LOCAL_KEY}}\n"
        )
        session = open_session(
            tmp_path,
            approval_handler=allow,
            home=tmp_path / "home",
            env={"LOCAL_KEY": "sk-local-secret"},
        )
        events = await collect(
            session.run("Add a docstring to mean() in stats.py and check it still works.")
        )
        await session.aclose()
        server.assert_all_used()

    done = events[-1]
    assert isinstance(done, TurnDone) and done.reason == "end_turn", done
    assert "docstring" in done.text
    edited = (tmp_path / "stats.py").read_text()
    assert '"""Arithmetic mean; 0 for an empty list."""' in edited
    results = {e.call.name: e.result for e in events if isinstance(e, ToolFinished)}
    assert results["bash"].content.strip().startswith("2.0")
    assert "stats.py" in results["grep"].content and not results["grep"].is_error

    # What the model received: the file content came back as a tool result.
    bodies = [r for r in server.requests]
    assert len(bodies) == 6  # five answered requests plus the 529
    last = json.dumps(bodies[-1])
    assert "Arithmetic mean" in last and "2.0" in last
    assert "sk-local-secret" not in last

    # The session is on disk, complete, and resumable.
    [info] = list_sessions(tmp_path)
    assert info.first_prompt.startswith("Add a docstring")
    loaded = load_session(tmp_path, info.id)
    assert [m.role for m in loaded.messages][:3] == ["user", "assistant", "user"]
    assert loaded.messages[-1].text.startswith("Added a docstring")
    raw = (tmp_path / ".mewcode" / "sessions" / info.id / "conversation.jsonl").read_text()
    assert "sk-local-secret" not in raw
