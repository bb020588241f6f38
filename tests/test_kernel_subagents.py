# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Subagents and background tasks from notebook cells of a real ``mewcode``
kernel, its model a local server speaking the Anthropic wire format (through
the real SDK): background roles and their notification, ``/tasks`` and
``/agents``, ``--agent``, model routing, headless approvals of background
work, and the task table surviving a kernel restart."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, WireReply, reply
from tests._kernel import (  # noqa: F401  (fixtures: kernel and jupyter_path use the ones below)
    Kernel,
    anthropic_openai_config,
    jupyter_path,
    kernel,
    kernel_env,
    running_kernel,
)

BOUND = 60.0


class Router:
    """Answers parent requests and subagent requests (a role's system prompt
    says it is a subagent) from two queues, whatever order they arrive in."""

    def __init__(self) -> None:
        self.parent: deque[WireReply] = deque()
        self.child: deque[WireReply] = deque()
        self.bodies: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> WireReply:
        system = json.dumps(body.get("system", ""))
        who = "child" if "as a subagent of MewCode" in system else "parent"
        with self.lock:
            self.bodies.append((who, body))
            queue = self.child if who == "child" else self.parent
            if not queue:
                raise AssertionError(f"no scripted reply left for a {who} request")
            return queue.popleft()

    def of(self, who: str) -> list[dict[str, Any]]:
        return [b for w, b in self.bodies if w == who]


@pytest.fixture(scope="module")
def router() -> Router:
    return Router()


@pytest.fixture(scope="module")
def server(router: Router) -> Iterator[ScriptedServer]:
    with ScriptedServer([router] * 60) as s:
        yield s


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer) -> Path:
    root = tmp_path_factory.mktemp("project")
    config = anthropic_openai_config(server.base_url, server.openai_base_url)
    config = config.replace(
        "    model: claude-sonnet-4-5\n",
        "    model: claude-sonnet-4-5\n    models:\n      haiku: claude-haiku-routed\n",
        1,
    )
    (root / ".mewcode.yaml").write_text(config)
    (root / "notes.txt").write_text("hello from the notes\n")
    return root


def agent_call(**args: Any) -> WireReply:
    return reply(tool_calls=[("Agent", {"description": "look around", **args})])


def test_a_background_role_reports_back_on_the_next_turn(
    kernel: Kernel, router: Router, project: Path
) -> None:
    router.parent.extend(
        [
            agent_call(
                prompt="List the notes",
                subagent_type="Explore",
                run_in_background=True,
                name="lister",
            ),
            reply(text="I asked an explorer."),
            reply(text="The explorer found notes.txt."),
        ]
    )
    router.child.extend(
        [
            reply(
                tool_calls=[
                    ("glob", {"pattern": "*.txt"}),
                    ("bash", {"command": "echo pwned > notes.txt"}),
                    ("bash", {"command": 'python3 -c \'open("notes.txt", "w")\''}),
                ]
            ),
            reply(text="There is notes.txt."),
        ]
    )
    cell = kernel.ok("%%agent --new\nWhat files are there? Ask an explorer in the background.")
    assert "✓ Agent look around" in cell.stdout
    assert cell.markdown[-1] == "I asked an explorer."
    kernel.ok("import magics\nawait magics.wait_background()", timeout=BOUND)
    child = router.of("child")
    assert child[0]["model"] == "claude-haiku-routed"  # Explore's haiku, routed
    assert "write_file" not in [t["name"] for t in child[0]["tools"]]
    results = child[1]["messages"][-1]["content"]
    assert [r.get("is_error", False) for r in results] == [False, True, True]
    assert all("read-only role" in json.dumps(r) for r in results[1:])
    assert (project / "notes.txt").read_text() == "hello from the notes\n"  # Explore wrote nothing
    tasks = kernel.ok("%agent /tasks").markdown[0]
    assert "lister" in tasks and "Explore" in tasks and "completed" in tasks
    later = kernel.ok("%agent Anything new?")
    assert later.markdown[-1] == "The explorer found notes.txt."
    news = json.dumps(router.of("parent")[-1]["messages"][-1])
    assert "task-notification" in news and "There is notes.txt." in news


def test_agents_and_agent_option(kernel: Kernel, router: Router) -> None:
    listed = kernel.ok("%agent /agents").markdown[0]
    for name in ("Explore", "Plan", "general-purpose"):
        assert f"`{name}`" in listed
    assert "built-in" in listed
    router.parent.append(reply(text="Planned: 1. read notes.txt."))
    cell = kernel.ok("%%agent --agent Plan\nPlan how to tidy the notes.")
    assert cell.markdown[-1] == "Planned: 1. read notes.txt."
    body = router.of("parent")[-1]
    assert "Critical files" in json.dumps(body["system"])  # Plan's own prompt
    offered = [t["name"] for t in body["tools"]]
    assert "write_file" not in offered and "Agent" not in offered and "bash" not in offered
    bad = kernel.run("%%agent --agent Nobody\nHi.")
    assert bad.status == "error" and "no subagent definition named 'Nobody'" in bad.text


def test_background_approvals_are_decided_headless(
    kernel: Kernel, router: Router, project: Path
) -> None:
    router.parent.extend(
        [
            agent_call(
                prompt="Write out.txt", subagent_type="general-purpose", run_in_background=True
            ),
            reply(text="Delegated."),
        ]
    )
    router.child.extend(
        [
            reply(tool_calls=[("write_file", {"path": "out.txt", "content": "x"})]),
            reply(text="I could not write it."),
        ]
    )
    kernel.ok("%%agent\nHave a helper write out.txt.")
    kernel.ok("import magics\nawait magics.wait_background()", timeout=BOUND)
    assert not (project / "out.txt").exists()
    result = router.of("child")[-1]["messages"][-1]["content"][0]
    assert result["is_error"] and "MEWCODE_HEADLESS_APPROVAL=deny" in json.dumps(result)


def test_tasks_survive_a_kernel_restart_and_resume(
    kernel: Kernel, router: Router, project: Path, tmp_path: Path
) -> None:
    router.parent.extend(
        [
            agent_call(
                prompt="Count the notes",
                subagent_type="general-purpose",
                run_in_background=True,
                name="counter",
            ),
            reply(text="Counting in the background."),
        ]
    )
    router.child.append(reply(text="1 note."))
    session_id = kernel.ok("%%agent --new\nCount the notes in the background.").provenance[0][
        "session_id"
    ]
    kernel.ok("import magics\nawait magics.wait_background()", timeout=BOUND)
    router.parent.extend(
        [
            reply(tool_calls=[("SendMessage", {"name": "counter", "message": "Count again"})]),
            reply(text="Asked it again."),
        ]
    )
    router.child.append(reply(text="Still 1 note."))
    kernel.ok("%agent /clear")  # the old kernel lets go of the session, as a restart would
    with running_kernel(project, kernel_env(tmp_path)) as fresh:
        fresh.ok(f"%%agent --resume {session_id}\n/tasks")
        tasks = fresh.ok("%agent /tasks").markdown[0]
        assert "counter" in tasks and "completed" in tasks
        fresh.ok(f"%%agent --resume {session_id}\nAsk the counter again.")
        fresh.ok("import magics\nawait magics.wait_background()", timeout=BOUND)
        again = json.dumps(router.of("child")[-1]["messages"])
        assert "Count the notes" in again and "1 note." in again and "Count again" in again
        tasks = fresh.ok("%agent /tasks").markdown[0]
        assert "counter" in tasks and "completed" in tasks
