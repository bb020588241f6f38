"""``/hooks``: the hook rules in use, where each comes from, what it matches,
how it went; the rules skipped and the project files waiting for trust.
``/hooks reload`` reads the hook files again."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..userdirs import display_path
from .builtin import _cell as table_cell
from .registry import CommandResult, command

if TYPE_CHECKING:
    from ..agent_session import AgentSession
    from ..hooks import HookEngine, HookRule

_NONE = (
    "No hooks are configured. Add rules to `.mewcode/hooks.yaml` (project) or "
    "`~/.mewcode/hooks.yaml` (you), or `hooks` to `.claude/settings.json`."
)


@command("hooks", help="List the hook rules, their last outcomes and failures.", usage="[reload]")
async def hooks_command(session: AgentSession, args: str) -> CommandResult:
    engine = session.hooks
    if engine is None:
        return CommandResult(markdown="Hooks are not managed by this session.", data=[])
    word = args.strip()
    if word not in ("", "reload"):
        return CommandResult(markdown="Usage: `/hooks` or `/hooks reload`.", error=True)
    if word == "reload":
        engine.reload()
    lines: list[str] = []
    if engine.rules:
        lines += [
            "| hook | event | matches | action | from | runs | failures | last outcomes |",
            "| --- | --- | --- | --- | --- | ---: | ---: | --- |",
        ]
        lines += [_row(engine, rule, session.root) for rule in engine.rules]
    elif engine.hooks.waiting or engine.problems() or engine.hooks.never:
        lines.append("No hook rules are in use.")
    else:
        lines.append(_NONE)
    extra = [f"- skipped: {_line(p)}" for p in engine.problems()]
    extra += [f"- not used: {_line(w)}" for w in engine.hooks.waiting]
    extra += [f"- never fires: {_line(n)}" for n in engine.hooks.never]
    if extra:
        lines += ["", *extra]
    if word == "reload":
        lines.insert(0, f"Read the hook files again: {len(engine.rules)} rule(s).\n")
    return CommandResult(markdown="\n".join(lines), data=[_data(engine, r) for r in engine.rules])


def _row(engine: HookEngine, rule: HookRule, root: Path) -> str:
    stats = engine.stats_for(rule)
    flags = [f for f, on in (("once", rule.only_once), ("async", rule.run_async)) if on]
    name = f"`{rule.name}`" + (f" ({', '.join(flags)})" if flags else "")
    last = "; ".join(stats.last) or "—"
    return (
        f"| {name} | {rule.event} | {_cell(rule.matcher)} | {_cell(rule.action.shown)} "
        f"| {_cell(_where(rule.source, root))} | {stats.runs} | {stats.failures} | {_cell(last)} |"
    )


def _data(engine: HookEngine, rule: HookRule) -> dict[str, object]:
    stats = engine.stats_for(rule)
    return {
        "name": rule.name,
        "event": rule.event,
        "matcher": rule.matcher,
        "action": rule.action.type,
        "source": str(rule.source),
        "scope": rule.scope,
        "runs": stats.runs,
        "failures": stats.failures,
        "last": list(stats.last),
    }


def _where(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        pass
    return display_path(path)


def _cell(text: object) -> str:
    shown = table_cell(text)
    return shown if len(shown) <= 120 else shown[:119] + "…"


def _line(text: str) -> str:
    return " ".join(text.split())
