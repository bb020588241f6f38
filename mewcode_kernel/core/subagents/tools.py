"""The tools that delegate: ``Agent`` (run a subagent) and the task tools
(``TaskList``, ``TaskGet``, ``TaskStop``, ``SendMessage``), as one toolset.
They are bound to the session's ``SubagentRunner`` when the toolset is made.

The task tools are offered once the session has a task (launched by the
model, moved to the background, or restored with the session): before that
they could only answer "no tasks", and their definitions would ride along in
every request. They join in the turn that made the first task, after every
other tool (``joins_within_turn``), and stay."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from ..errors import ToolError
from ..tasks import TaskInfo
from ..tools.base import Tool, tool
from ..tools.context import RunContext
from .catalog import AgentCatalog
from .runner import SubagentRequest, SubagentRunner

__all__ = ["DelegationToolset", "subagent_toolset"]


_AGENT_GUIDE = """Launch a subagent to handle a task with a context of its own, keeping yours small.

Available subagent_type values:
{roles}

Leave subagent_type out to fork yourself: a copy of you that starts from this conversation and
works in the background; its report reaches you when it finishes.

- Give the subagent everything it needs in `prompt`: it does not see your conversation (unless
  forked).
- Launch independent subagents in parallel: several Agent calls in one reply.
- With run_in_background the call returns a task id at once; a `<task-notification>` brings the
  result later. TaskList / TaskGet show progress, TaskStop stops one, SendMessage continues a
  finished one.
- The subagent's final answer is returned to you, not shown to the user: summarise it for them."""


def _agent_guide(catalog: AgentCatalog) -> str:
    """``Agent``'s description, listing the subagents of ``catalog``."""
    roles = "\n".join(
        f"- {d.name}: {' '.join(d.description.split())[:300]}" for d in catalog.list()
    )
    return _AGENT_GUIDE.format(roles=roles)


def _when(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _summary(info: TaskInfo, runner: SubagentRunner) -> dict[str, Any]:
    return {
        "id": info.id,
        "name": info.name,
        "role": info.role or runner.role_of(info.id),
        "status": info.state,
        "tool_count": info.tool_count,
        "last_activity": info.last_activity,
    }


def _task(runner: SubagentRunner, task_id: str) -> TaskInfo:
    info = next((i for i in runner.tasks() if i.id == task_id or i.name == task_id), None)
    if info is None:
        known = ", ".join(f"{i.id} ({i.name})" for i in runner.tasks()) or "none"
        raise ToolError(f"no task {task_id!r} in this session; known tasks: {known}")
    return info


class DelegationToolset:
    """``Agent`` always; the task tools from the session's first task on."""

    name = "subagents"
    joins_within_turn = True

    def __init__(self, runner: SubagentRunner, agent: Tool, task_tools: Sequence[Tool]) -> None:
        self.runner = runner
        self._agent = agent
        self._task_tools = list(task_tools)
        self._tasks_offered = False

    @property
    def version(self) -> int:
        return int(self.tasks_offered)

    @property
    def tasks_offered(self) -> bool:
        """Whether the task tools are offered (once true, for good)."""
        if not self._tasks_offered and self.runner.task_ids():
            self._tasks_offered = True
        return self._tasks_offered

    def tools(self) -> Sequence[Tool]:
        return [self._agent, *self._task_tools] if self.tasks_offered else [self._agent]

    async def __aenter__(self) -> DelegationToolset:
        return self

    async def __aexit__(self, *_: object) -> None:
        return None


def subagent_toolset(runner: SubagentRunner) -> DelegationToolset:
    """``Agent`` and the four task tools, bound to the session's ``runner``
    (the agent that calls them is the one delegating: ``ctx.services``)."""

    @tool(
        name="Agent",
        read_only=False,
        kind="other",
        family="agent",
        rule_names=frozenset({"Agent", "Task"}),
        aliases=frozenset({"Task"}),
        subject_arg="subagent_type",
        display_key="description",
        default_allow=True,
    )
    async def agent(
        ctx: RunContext,
        description: Annotated[
            str, Field(description="A short (3-5 word) description of the task.")
        ],
        prompt: Annotated[
            str, Field(description="The task for the subagent, complete and self-contained.")
        ],
        subagent_type: Annotated[
            str | None,
            Field(description="Which subagent to run; leave it out to fork yourself."),
        ] = None,
        model: Annotated[
            Literal["inherit", "haiku", "sonnet", "opus"] | None,
            Field(description="The model family for this run (default: the subagent's own)."),
        ] = None,
        run_in_background: Annotated[
            bool, Field(description="Return at once; you are notified when it finishes.")
        ] = False,
        name: Annotated[
            str | None, Field(description="A name to reach the task by later (SendMessage).")
        ] = None,
    ) -> str:
        """Launch a subagent: another agent with a context of its own."""
        request = SubagentRequest(
            prompt=prompt, description=description, subagent_type=subagent_type, model=model,
            run_in_background=run_in_background, name=name,
        )  # fmt: skip
        return await runner.run(ctx, request)

    @tool(name="TaskList", read_only=True, kind="read", default_allow=True)
    async def task_list(ctx: RunContext) -> str:
        """List this session's background tasks, unfinished ones first."""
        return json.dumps([_summary(i, runner) for i in runner.tasks()], indent=1)

    @tool(name="TaskGet", read_only=True, kind="read", display_key="task_id", default_allow=True)
    async def task_get(
        ctx: RunContext, task_id: Annotated[str, Field(description="The task's id (or name).")]
    ) -> str:
        """Show one task: status, task, result, usage and times."""
        info = _task(runner, task_id)
        body = {
            **_summary(info, runner),
            "task": info.description,
            "result": info.result,
            "error": info.error,
            "usage": {
                "input": info.usage.input_tokens,
                "output": info.usage.output_tokens,
                "cache_read": info.usage.cache_read_tokens,
                "cache_write": info.usage.cache_creation_tokens,
            },
            "start_time": _when(info.started_at),
            "end_time": _when(info.ended_at),
        }
        return json.dumps(body, indent=1)

    @tool(name="TaskStop", read_only=False, kind="other", display_key="task_id", default_allow=True)
    async def task_stop(
        ctx: RunContext, task_id: Annotated[str, Field(description="The task's id (or name).")]
    ) -> str:
        """Stop a running or queued task; it ends cancelled."""
        info = _task(runner, task_id)
        manager = runner.task_manager
        if manager is None or not manager.stop(info.id):
            raise ToolError(f"task {info.id} is {info.state}: there is nothing to stop")
        return json.dumps({"task_id": info.id, "status": "cancellation_requested"})

    @tool(name="SendMessage", read_only=False, kind="other", display_key="name", default_allow=True)
    async def send_message(
        ctx: RunContext,
        name: Annotated[str, Field(description="The task's name (or id).")],
        message: Annotated[str, Field(description="What to tell it.")],
    ) -> str:
        """Continue a finished subagent task with a new message; it runs in the background."""
        try:
            info = runner.send(name, message)
        except KeyError:
            known = ", ".join(f"{i.name} ({i.id})" for i in runner.tasks()) or "none"
            raise ToolError(f"no subagent task named {name!r}; known tasks: {known}") from None
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        return json.dumps({"task_id": info.id, "status": "resumed"})

    described = dataclasses.replace(agent, description=_agent_guide(runner.catalog))
    return DelegationToolset(runner, described, [task_list, task_get, task_stop, send_message])
