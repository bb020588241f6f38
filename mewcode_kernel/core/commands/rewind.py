"""``/rewind``: revert the files a turn changed, from its checkpoint.

Forms (see ``checkpoints.lookup``): ``/rewind`` (the latest turn with
changes not reverted yet), ``/rewind N``, ``/rewind SESSION:N``,
``/rewind cell N``, ``/rewind list``; ``--dry-run`` shows the plan and its
diffs without changing anything, ``--force`` also overwrites files changed
since the turn. Without ``--force`` a conflict reverts nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..checkpoints import (
    RevertPlan,
    apply_all,
    find_turn,
    plan_all,
    store_of,
    stored_turns,
)
from ..checkpoints.records import TurnRecord
from .registry import CommandResult, command

if TYPE_CHECKING:
    from ..agent_session import AgentSession

__all__ = ["plan_markdown", "rewind_command"]

_VERBS = {
    "restore": "restore",
    "delete": "delete (the turn created it)",
    "unchanged": "nothing to do",
    "conflict": "changed since the turn: left alone",
    "refused": "not reverted",
}


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _where(record: TurnRecord) -> str:
    count = record.origin.get("execution_count")
    return f" (cell In [{count}])" if isinstance(count, int) else ""


def plan_markdown(plan: RevertPlan) -> str:
    """The plan (or, once applied, its outcome) as Markdown, diffs included."""
    record = plan.record
    lines = ["| file | " + ("outcome" if plan.applied else "revert would") + " |", "| --- | --- |"]
    for item in plan.items:
        if plan.applied:
            what = item.outcome
        elif item.action == "conflict" and plan.force:
            what = f"{item.reason}: overwritten (--force)"
        else:
            what = _VERBS[item.action] + (f" ({item.reason})" if item.reason else "")
        lines.append(f"| `{_cell(item.shown)}` | {_cell(what)} |")
    for summary in plan.untracked:
        lines.append(f"| `{_cell(summary)}` | {_cell(record.commands_note)} |")
    diffs = [i for i in plan.items if i.diff and (i.changes or i.action == "conflict")]
    if diffs:
        lines.append("")
        for item in diffs:
            fence = "```diff" if not item.diff.startswith("binary file") else "```"
            lines += [f"`{item.shown}`:", "", fence, item.diff.rstrip("\n"), "```"]
    head = f"turn `{record.label}`{_where(record)}"
    return "\n".join([head, "", *lines])


@command(
    "rewind",
    help="Revert the files a turn changed (default: the latest turn not reverted yet).",
    usage="[N | SESSION:N | cell N | list] [--dry-run] [--force]",
)
async def rewind_command(session: AgentSession, args: str) -> CommandResult:
    words = args.split()
    force, dry = "--force" in words, "--dry-run" in words
    spec = " ".join(w for w in words if w not in ("--force", "--dry-run"))
    if spec == "list":
        return _list(session)
    try:
        record = find_turn(session.root, session.session_id, spec, session.checkpoints.key)
    except ValueError as exc:
        return CommandResult(markdown=str(exc), error=True)
    store = store_of(session.root, record, session.checkpoints.key)
    workspace = session.agent.ctx.workspace
    notebooks = session.checkpoints.notebooks
    plan = await plan_all(record, store, workspace, notebooks, force=force)
    data = {"turn": record.label, "plan": plan}
    if dry:
        return CommandResult(markdown="Would revert " + plan_markdown(plan), data=data)
    if plan.conflicts and not force:
        return CommandResult(
            markdown="Nothing reverted: some files changed since "
            + plan_markdown(plan)
            + "\n\n`--force` overwrites them with their content from before the turn.",
            data=data,
        )
    if not plan.changes:
        return CommandResult(markdown="Nothing to revert in " + plan_markdown(plan), data=data)
    done = await apply_all(plan, store, workspace, notebooks)
    return CommandResult(markdown="Reverted " + plan_markdown(done), data={**data, "plan": done})


def _list(session: AgentSession) -> CommandResult:
    try:
        records = stored_turns(session.root, session.checkpoints.key)
    except ValueError as exc:
        return CommandResult(markdown=str(exc), error=True)
    if not records:
        return CommandResult(markdown="No checkpoints in this project yet.", data=[])
    lines = [
        "| | turn | cell | started (UTC) | files | state |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in reversed(records[-30:]):
        mark = "▶" if r.session_id == session.session_id else ""
        count = r.origin.get("execution_count")
        changed = r.changed
        files = ", ".join(f"`{_cell(e)}`" for e in changed[:5])
        more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        if r.commands and not changed:
            files = "(commands only: not tracked)"
        state = "reverted" if r.reverted else ""
        lines.append(
            f"| {mark} | `{r.label}` | {count if isinstance(count, int) else ''} "
            f"| {r.started[:19].replace('T', ' ')} | {files}{more} | {state} |"
        )
    lines.append(
        "\n`/rewind N` (this session), `/rewind SESSION:N` or `/rewind cell N` reverts one."
    )
    return CommandResult(markdown="\n".join(lines), data=[r.label for r in records])
