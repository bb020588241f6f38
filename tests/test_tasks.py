"""The core task manager running real agent turns: a cap that queues, states
that only move forward, usage and tool counts, stop, resume, subscribers
that join late."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.config import ProviderSettings, ResolvedConfig
from mewcode_kernel.core.events import ModelEvent, TurnDone
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.tasks import TaskManager, TaskUpdate
from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing import ScriptedModel, reply, tool_call


class Held:
    """A scripted model whose requests wait for ``release``; counts how many
    requests wait at once across every instance sharing ``gauge``."""

    def __init__(self, script: list[Any], release: asyncio.Event, gauge: dict[str, Any]):
        self.inner = ScriptedModel(script)
        self.release = release
        self.gauge = gauge

    @property
    def name(self) -> str:
        return "held"

    @property
    def model(self) -> str:
        return "held-1"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.gauge["now"] += 1
        self.gauge["peak"] = max(self.gauge["peak"], self.gauge["now"])
        self.gauge["changed"].set()
        try:
            await self.release.wait()
        finally:
            self.gauge["now"] -= 1
        async for event in self.inner.stream(request):
            yield event


def session(root: Path, model: Any, tasks: TaskManager) -> AgentSession:
    settings = ProviderSettings(
        name="held", protocol="anthropic", model="held-1", context_window=200_000
    )
    return AgentSession(
        root, config=ResolvedConfig(root=root), provider=model, settings=settings,
        home=root / "home", tasks=tasks,
    )  # fmt: skip


async def test_eight_background_turns_with_a_cap_of_three(tmp_path: Path) -> None:
    manager = TaskManager(max_running=3)
    release = asyncio.Event()
    gauge: dict[str, Any] = {"now": 0, "peak": 0, "changed": asyncio.Event()}
    usage = Usage(input_tokens=100, output_tokens=10)
    sessions = [
        session(
            tmp_path,
            Held(
                [reply(tool_call("glob", {"pattern": "*.py"}), usage=usage),
                 reply(f"Answer {n}.", usage=usage)],
                release,
                gauge,
            ),
            manager,
        )
        for n in range(8)
    ]  # fmt: skip
    infos = [
        manager.launch(lambda s=s, n=n: s.run(f"task {n}"), name=f"t{n}", description=f"task {n}")
        for n, s in enumerate(sessions)
    ]
    assert [i.state for i in infos] == ["running"] * 3 + ["queued"] * 5
    while gauge["now"] < 3:  # woken by each arrival, bounded
        gauge["changed"].clear()
        await asyncio.wait_for(gauge["changed"].wait(), 10)

    assert manager.stop(infos[7].id)  # queued: cancelled at once, never runs
    assert manager.get(infos[7].id).state == "cancelled"  # type: ignore[union-attr]
    assert manager.stop(infos[0].id)  # running: cancelled when it sees it
    await manager.wait(infos[0].id, timeout=10)
    assert manager.get(infos[0].id).state == "cancelled"  # type: ignore[union-attr]

    late: list[TaskUpdate] = []
    manager.subscribe(late.append)  # long after launch, as a new cell would
    release.set()
    await manager.wait(timeout=30)

    assert gauge["peak"] == 3 and manager.peak_running == 3
    final = {i.id: manager.get(i.id) for i in infos}
    states = [final[i.id].state for i in infos]  # type: ignore[union-attr]
    assert states == ["cancelled"] + ["completed"] * 6 + ["cancelled"]
    for n in range(1, 7):
        done = final[infos[n].id]
        assert done is not None and done.result == f"Answer {n}."
        assert done.tool_count == 1 and done.usage == usage + usage
        assert done.started_at is not None and done.ended_at is not None
    assert final[infos[7].id].started_at is None  # type: ignore[union-attr]
    assert {u.task.id for u in late} >= {i.id for i in infos[1:7]}
    assert any(isinstance(u.event, TurnDone) for u in late)
    assert [i.state for i in manager.list()][:1] != ["running"]  # all finished
    for s in sessions:
        await s.aclose()


async def test_a_failing_task_fails_alone_and_a_finished_one_can_resume(tmp_path: Path) -> None:
    manager = TaskManager(max_running=2)

    async def broken() -> AsyncIterator[Any]:
        raise RuntimeError("boom")
        yield  # pragma: no cover

    model = ScriptedModel([reply("First."), reply("Second.")])
    s = session(tmp_path, model, manager)
    bad = manager.launch(broken, name="bad")
    good = manager.launch(lambda: s.run("one"), name="good")
    await manager.wait(timeout=10)
    assert manager.get(bad.id).state == "failed"  # type: ignore[union-attr]
    assert manager.get(bad.id).error == "RuntimeError: boom"  # type: ignore[union-attr]
    assert manager.get(good.id).result == "First."  # type: ignore[union-attr]
    again = manager.resume(good.id, lambda: s.run("two"))
    assert again.id == good.id and again.state == "running"
    await manager.wait(good.id, timeout=10)
    assert manager.get(good.id).state == "completed"  # type: ignore[union-attr]
    assert manager.get(good.id).result == "Second."  # type: ignore[union-attr]
    assert manager.find("good").id == good.id  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="failed, not completed"):
        manager.resume(bad.id, lambda: s.run("x"))
    assert not manager.stop(good.id)  # finished: nothing to stop
    await s.aclose()


async def test_ids_never_collide() -> None:
    manager = TaskManager(max_running=1)
    release = asyncio.Event()

    async def wait() -> AsyncIterator[Any]:
        await release.wait()
        return
        yield  # pragma: no cover

    ids = {manager.launch(wait, name="w").id for _ in range(2_000)}
    assert len(ids) == 2_000
    release.set()
    await manager.aclose()
    assert all(i.finished for i in manager.list())
