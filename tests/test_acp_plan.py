"""The session's task list reaches an ACP client as its plan: a background
subagent the model launches is a ``plan`` entry, ``in_progress`` (or
``pending``) while it works and ``completed`` when it is done, sent after
the turn that launched it has ended; the server driven by the ACP
library's client against a scripted model that answers the parent and the
subagent from two queues."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp.helpers import text_block

from mewcode_acp.plan import plan_of
from mewcode_kernel.core.tasks import TaskInfo
from mewcode_kernel.testing.wire import ScriptedServer, WireReply, reply
from tests._acp import acp_agent, project_with


class Router:
    """Parent and subagent requests answered from two queues, whatever order
    they arrive in; the subagent's answer waits for ``release``."""

    def __init__(self) -> None:
        self.parent: deque[WireReply] = deque()
        self.child: deque[WireReply] = deque()
        self.release = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> WireReply:
        child = "as a subagent of MewCode" in json.dumps(body.get("system", ""))
        if child:
            self.release.wait(timeout=60)
        with self.lock:
            queue = self.child if child else self.parent
            if not queue:
                raise AssertionError("no scripted reply left")
            return queue.popleft()


@pytest.fixture
def router() -> Router:
    return Router()


@pytest.fixture
def server(router: Router) -> Iterator[ScriptedServer]:
    with ScriptedServer([router] * 10) as s:
        yield s
        router.release.set()
        assert not s.errors, s.errors


async def test_a_background_subagent_is_a_plan_entry_until_it_is_done(
    tmp_path: Path, server: ScriptedServer, router: Router
) -> None:
    project = project_with(tmp_path / "project", server.base_url, server.openai_base_url)
    home = tmp_path / "home"
    home.mkdir()
    launch = {
        "description": "count the notes",
        "prompt": "Count the notes.",
        "subagent_type": "general-purpose",
        "run_in_background": True,
        "name": "counter",
    }
    router.parent.extend(
        [reply(tool_calls=[("Agent", launch)]), reply(text="A helper is counting.")]
    )
    router.child.append(reply(text="There are no notes."))
    async with acp_agent(project, home) as agent:
        session_id = await agent.start(project)
        client = agent.client

        def plans() -> list[list[dict[str, Any]]]:
            return [
                u["entries"] for u in client.updates(session_id) if u["sessionUpdate"] == "plan"
            ]

        result = await agent.conn.prompt(session_id=session_id, prompt=[text_block("count")])
        assert result.stop_reason == "end_turn"
        # the turn is over; the subagent is still waiting for its model
        await client.wait_for(lambda: any(p and p[0]["status"] != "completed" for p in plans()))
        [working] = plans()[-1]
        assert working["content"] == "counter (general-purpose): count the notes"
        assert working["status"] in {"pending", "in_progress"}
        router.release.set()
        await client.wait_for(lambda: bool(plans()) and plans()[-1][0]["status"] == "completed")
        [done] = plans()[-1]
        assert done["content"] == "counter (general-purpose): count the notes"


def _info(name: str, state: str, launched: float, **more: Any) -> TaskInfo:
    return TaskInfo(
        id=name, name=name, kind="subagent", description=f"{name}'s job", state=state,  # type: ignore[arg-type]
        launched_at=launched, **more,
    )  # fmt: skip


def test_the_plan_lists_tasks_in_launch_order_with_acps_statuses() -> None:
    plan = plan_of(
        [
            _info("late", "queued", 3.0),
            _info("broken", "failed", 2.0, role="Explore"),
            _info("first", "completed", 1.0),
            _info("gone", "interrupted", 2.5),
            _info("busy", "running", 2.7),
        ]
    )
    shown = [(e.content, e.status) for e in plan.entries]
    assert shown == [
        ("first: first's job", "completed"),
        ("broken (Explore): broken's job [failed]", "completed"),
        ("gone: gone's job [interrupted]", "completed"),
        ("busy: busy's job", "in_progress"),
        ("late: late's job", "pending"),
    ]
