"""Context commands: ``/context``, ``/compact [instructions]`` and ``/memory``."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from ..events import PostCompact
from ..prompt.memory import Scope
from .registry import CommandResult, command

if TYPE_CHECKING:
    from ..agent_session import AgentSession

_MEMORY_USAGE = (
    "Usage: `/memory` (show), `/memory add [--user] NOTE`, `/memory remove N`. "
    "`%agent # NOTE` also adds a project note."
)


def _fail(message: str) -> CommandResult:
    return CommandResult(markdown=message, error=True)


@command("context", help="Show how full the context window is and what fills it.")
async def context_command(session: AgentSession, args: str) -> CommandResult:
    report = session.context_report()
    return CommandResult(markdown=report.markdown(), data=report.to_dict())


@command(
    "compact",
    help="Summarise older turns now, keeping recent ones (optional instructions for the summary).",
    usage="[INSTRUCTIONS]",
)
async def compact_command(session: AgentSession, args: str) -> CommandResult:
    done: PostCompact | None = None
    async for event in session.compact(args.strip() or None):
        if isinstance(event, PostCompact):
            done = event
    if done is None:
        return CommandResult(markdown="Nothing to compact: the conversation is empty.")
    if not done.ok:
        return _fail(f"{done.error} The conversation is unchanged.")
    return CommandResult(
        markdown=(
            f"Compacted: {done.summarized_messages} older messages summarised, "
            f"{done.kept_messages} recent kept; about {done.tokens_before:,} -> "
            f"{done.tokens_after:,} tokens.\n\n<details><summary>Summary</summary>\n\n"
            f"{done.summary}\n\n</details>"
        ),
        data={
            "summarized": done.summarized_messages,
            "kept": done.kept_messages,
            "tokens_before": done.tokens_before,
            "tokens_after": done.tokens_after,
            "summary": done.summary,
        },
    )


@command("memory", help="Show, add or remove memory notes.", usage="[add [--user] NOTE | remove N]")
async def memory_command(session: AgentSession, args: str) -> CommandResult:
    verb, _, rest = args.strip().partition(" ")
    if not verb or verb == "show":
        return _show(session)
    if verb == "add":
        return _add(session, rest)
    if verb in ("remove", "rm", "delete"):
        try:
            number = int(rest.strip())
        except ValueError:
            return _fail(f"`/memory remove` needs a note number. {_MEMORY_USAGE}")
        try:
            removed = session.memory.remove(number)
        except ValueError as exc:
            return _fail(f"Cannot remove note {number}: {exc}.")
        return CommandResult(
            markdown=f"Removed {removed.scope} note {number}: {removed.text}\n\n"
            "The change reaches the model at the next `/clear`, resume or compaction.",
            data={"scope": removed.scope, "text": removed.text},
        )
    return _fail(f"Unknown `/memory` action `{verb}`. {_MEMORY_USAGE}")


def _add(session: AgentSession, rest: str) -> CommandResult:
    try:
        words = shlex.split(rest)
    except ValueError:
        words = rest.split()
    scope: Scope = "user" if "--user" in words else "project"
    note = " ".join(w for w in words if w not in ("--user", "--project"))
    if not note:
        return _fail(f"`/memory add` needs the note's text. {_MEMORY_USAGE}")
    saved = session.remember(note, scope=scope)
    where = session.memory.path(scope)
    return CommandResult(
        markdown=f"Remembered ({scope} note {saved.number}, in `{where}`): {saved.text}",
        data={"number": saved.number, "scope": scope, "text": saved.text},
    )


def _show(session: AgentSession) -> CommandResult:
    notes = session.memory.notes()
    paths = ", ".join(f"`{session.memory.path(s)}`" for s in ("project", "user"))
    if not notes:
        return CommandResult(markdown=f"No memory notes yet ({paths}). {_MEMORY_USAGE}", data=[])
    lines = ["| # | scope | note |", "| ---: | --- | --- |"]
    for n in notes:
        cell = " ".join(n.text.split()).replace("|", "\\|")
        lines.append(f"| {n.number} | {n.scope} | {cell} |")
    lines += ["", f"Files: {paths} (plain Markdown; edit them freely). {_MEMORY_USAGE}"]
    return CommandResult(
        markdown="\n".join(lines),
        data=[{"number": n.number, "scope": n.scope, "text": n.text} for n in notes],
    )
