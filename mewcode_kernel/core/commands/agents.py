"""Delegation commands: ``/agents`` (the subagent definitions and where each
comes from) and ``/tasks`` (this session's background tasks)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .registry import CommandResult, command

if TYPE_CHECKING:
    from ..agent_session import AgentSession


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


@command("agents", help="List the subagent definitions and where each comes from.")
async def agents_command(session: AgentSession, args: str) -> CommandResult:
    catalog = session.catalog
    lines = [
        "| subagent | from | model | turns | what it is for |",
        "| --- | --- | --- | --- | --- |",
    ]
    for d in catalog.list():
        lines.append(
            f"| `{d.name}` | {_cell(d.where)} | {d.model} | {d.max_turns} | {_cell(d.description[:160])} |"
        )
    for d in catalog.overridden:
        lines.append(f"\n`{d.name}` from {d.where} is overridden by a later layer.")
    for p in catalog.problems:
        lines.append(f"\n⚠ {p}")
    lines.append(
        "\nProject definitions (`.mewcode/agents/`, `.claude/agents/`, subfolders included) "
        "override the user's (`~/.mewcode/agents/`, `~/.claude/agents/`), which override the "
        "built-ins."
    )
    return CommandResult(
        markdown="\n".join(lines),
        data=[{"name": d.name, "source": d.source, "path": d.where} for d in catalog.list()],
    )


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


@command("tasks", help="Show this session's background tasks (live in a notebook).")
async def tasks_command(session: AgentSession, args: str) -> CommandResult:
    # turns and subagents alike, restored ones too (interrupted by a kernel's end)
    infos = session.task_records.tasks()
    if not infos:
        return CommandResult(
            markdown="No background tasks in this session.", data=[], meta={"widget": "tasks"}
        )
    lines = [
        "| task | name | role | status | time | tokens | tools | last activity |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    now = time.time()
    for i in infos:
        elapsed = (i.ended_at or now) - i.started_at if i.started_at else 0.0
        tokens = _tokens(i.usage.total_input_tokens + i.usage.output_tokens)
        # an interrupted or failed task says why where its activity would be
        said = i.error if i.state in ("interrupted", "failed") and i.error else i.last_activity
        lines.append(
            f"| `{i.id}` | {_cell(i.name)} | {_cell(i.role)} | {i.state} | {elapsed:.0f} s "
            f"| {tokens} | {i.tool_count} | {_cell(said[:80])} |"
        )
    return CommandResult(
        markdown="\n".join(lines),
        data=[{"id": i.id, "name": i.name, "status": i.state} for i in infos],
        meta={"widget": "tasks"},
    )
