"""The built-in slash commands: /help /clear /sessions /resume /mode /model
/tools /cost /permissions. Each returns Markdown for people and ``data`` for
programs; a failure is a ``CommandResult`` with ``error=True`` whose Markdown
is one sentence naming the cause."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ConfigError, SessionError
from ..permission.modes import MODES
from ..pricing import estimate_cost
from ..providers.factory import close_provider
from ..session import list_sessions
from ..usage import Usage
from .registry import COMMANDS, CommandResult, command

if TYPE_CHECKING:
    from ..agent_session import AgentSession


def _fail(message: str) -> CommandResult:
    return CommandResult(markdown=message, error=True)


def _cell(text: object) -> str:
    """A value made safe for one Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _first_sentence(text: str) -> str:
    paragraph = " ".join(text.strip().split("\n\n")[0].split())
    head, dot, _ = paragraph.partition(". ")
    return head + "." if dot else paragraph


@command("help", help="List the slash commands.")
async def help_command(session: AgentSession, args: str) -> CommandResult:
    lines = ["| command | what it does |", "| --- | --- |"]
    for name in sorted(COMMANDS):
        cmd = COMMANDS[name]
        usage = f" {cmd.usage}" if cmd.usage else ""
        lines.append(f"| `{_cell('/' + name + usage)}` | {_cell(cmd.help)} |")
    return CommandResult(markdown="\n".join(lines), data=sorted(COMMANDS))


@command("clear", help="Start a new session; the next turn begins a fresh conversation.")
async def clear_command(session: AgentSession, args: str) -> CommandResult:
    await session.new()
    return CommandResult(
        markdown="Started a new session: the next turn begins a fresh conversation."
    )


@command("sessions", help="List your stored sessions of this project, newest first.")
async def sessions_command(session: AgentSession, args: str) -> CommandResult:
    try:
        infos = list_sessions(session.root)
    except SessionError as exc:
        return _fail(str(exc))
    if not infos:
        return CommandResult(markdown="No stored sessions of yours in this project yet.", data=[])
    # which notebook each came from, when kernels said (JPY_SESSION_NAME)
    notebooks = any(info.notebook for info in infos)
    extra = (" notebook |", " --- |") if notebooks else ("", "")
    lines = [
        f"| | session | updated (UTC) | messages |{extra[0]} first prompt |",
        f"| --- | --- | --- | --- |{extra[1]} --- |",
    ]
    for info in infos:
        mark = "▶" if info.id == session.session_id else ""
        where = f" {_cell(info.notebook or '')} |" if notebooks else ""
        lines.append(
            f"| {mark} | `{info.id}` | {info.updated:%Y-%m-%d %H:%M} | {info.message_count} "
            f"|{where} {_cell(info.first_prompt)} |"
        )
    lines.append("\n`/resume ID` (or `%%agent --resume ID`) continues one; an id prefix is enough.")
    return CommandResult(markdown="\n".join(lines), data=infos)


@command(
    "resume",
    help="Continue a stored session (default: the most recent other one, this notebook's first); "
    "--fork continues a copy in a new session (for one in use by another kernel).",
    usage="[ID] [--fork]",
)
async def resume_command(session: AgentSession, args: str) -> CommandResult:
    words = args.split()
    fork = "--fork" in words
    target = " ".join(w for w in words if w != "--fork")
    if not target:
        try:
            others = [s for s in list_sessions(session.root) if s.id != session.session_id]
        except SessionError as exc:
            return _fail(f"Cannot resume: {exc}")
        others = [s for s in others if s.problem is None]  # flagged ones cannot be resumed
        if not others:
            return _fail("There is no other stored session of yours to resume in this project.")
        # this notebook's latest first, when kernels said which notebook they served
        here = [s for s in others if s.notebook and s.notebook == session.log.notebook]
        target = (here or others)[0].id
    try:
        loaded = await session.resume(target, fork=fork)
    except SessionError as exc:
        return _fail(f"Cannot resume {target!r}: {exc}")
    count = len(loaded.messages)
    if fork:
        return CommandResult(
            markdown=f"Forked session `{loaded.id}` ({count} messages) into `{session.session_id}`: "
            "the next turn continues the copy.",
            data=session.session_id,
        )
    return CommandResult(
        markdown=f"Resumed session `{loaded.id}` ({count} messages): the next turn continues it.",
        data=loaded.id,
    )


@command("mode", help="Show or set the permission mode for the session.", usage="[MODE]")
async def mode_command(session: AgentSession, args: str) -> CommandResult:
    wanted = args.strip()
    if wanted:
        try:
            session.mode = wanted
        except ValueError as exc:
            return _fail(f"Cannot switch to mode {wanted!r}: {exc}")
    modes = ", ".join(f"`{m}`" for m in MODES)
    verb = "is now" if wanted else "is"
    return CommandResult(
        markdown=f"Permission mode {verb} **{session.mode}**. Modes: {modes}.", data=session.mode
    )


@command(
    "model",
    help="Show the provider and model, or switch (the conversation is kept).",
    usage="[PROVIDER] [MODEL]",
)
async def model_command(session: AgentSession, args: str) -> CommandResult:
    words = args.split()
    if not words:
        return _show_model(session)
    if len(words) > 2:
        return _fail("Usage: `/model MODEL`, `/model PROVIDER` or `/model PROVIDER MODEL`.")
    name: str | None
    model: str | None
    if len(words) == 2:
        name, model = words
    elif words[0] in session.config.available_providers():
        name, model = words[0], None
    else:
        name, model = None, words[0]
    try:
        provider, settings = session.provider_for(name, model)
    except ConfigError as exc:
        return _fail(f"Cannot switch: {exc}")
    previous, _ = session.use_provider(provider, settings)
    await close_provider(previous)
    return CommandResult(
        markdown=f"Now using **{settings.name}** with model **{settings.model}**; "
        "the conversation continues.",
        data={"provider": settings.name, "model": settings.model},
    )


def _show_model(session: AgentSession) -> CommandResult:
    current = session.settings.name if session.settings else session.provider.name
    lines = [
        f"Using **{session.provider_label}** (provider `{current}`, model "
        f"`{session.provider.model}`).",
        "",
        "| provider | protocol | model | |",
        "| --- | --- | --- | --- |",
    ]
    for name, entry in session.config.providers.items():
        state = "current" if name == current else ("" if entry.usable else "unusable")
        lines.append(
            f"| `{name}` | {entry.protocol or '?'} | {entry.model or 'default'} | {state} |"
        )
    lines.append("\n`/model MODEL`, `/model PROVIDER` or `/model PROVIDER MODEL` switches.")
    return CommandResult(
        markdown="\n".join(lines), data={"provider": current, "model": session.provider.model}
    )


@command("tools", help="List the tools and which ones the model is offered now.")
async def tools_command(session: AgentSession, args: str) -> CommandResult:
    session.tools.refresh()  # between turns: the list the next turn starts with
    tools = list(session.tools)
    offered = {t.name for t in session.gate.offered_tools(tools)}
    # tool search: what the next request carries, and what it leaves to search_tools
    sent = {t.name for t in session.agent.request_tools()}
    searched = {t.name for t in session.agent.searchable_tools()}
    lines = ["| tool | kind | offered | what it does |", "| --- | --- | --- | --- |"]
    for tool in tools:
        if tool.name in offered and tool.name not in sent | searched:
            continue  # search_tools while every definition fits
        kind = "read-only" if tool.read_only else "changes things"
        first = _first_sentence(tool.description)
        yes = "yes" if tool.name in sent else f"no ({session.mode} mode)"
        if tool.name in searched and tool.name not in sent:
            yes = "when found by search_tools"
        lines.append(f"| `{tool.name}` | {kind} | {yes} | {_cell(first)} |")
    return CommandResult(markdown="\n".join(lines), data=sorted(offered & (sent | searched)))


def _priced(by_model: dict[str, Usage], default: str) -> tuple[float | None, str]:
    """The session's cost, each model's tokens at its own list price (a role
    may run on another model than the session's), and how to say it."""
    spent: dict[str, Usage] = {}
    for model, usage in by_model.items():
        name = model or default
        spent[name] = spent.get(name, Usage()) + usage
    spent = spent or {default: Usage()}
    shown = ", ".join(f"`{m}`" for m in spent)
    costs = [estimate_cost(m, u) for m, u in spent.items()]
    unknown = [m for m, c in zip(spent, costs, strict=True) if c is None]
    if unknown:
        return None, f"unknown (no list price for {', '.join(f'`{m}`' for m in unknown)})"
    total = sum(c for c in costs if c is not None)
    return total, f"about **${total:.4f}** at the list price of {shown}"


@command("cost", help="Tokens used in this session, and the cost when the price is known.")
async def cost_command(session: AgentSession, args: str) -> CommandResult:
    usage = session.state.usage
    cost, price = _priced(session.state.usage_by_model, session.provider.model)
    lines = [
        "| tokens | count |",
        "| --- | ---: |",
        f"| input | {usage.input_tokens:,} |",
        f"| output | {usage.output_tokens:,} |",
        f"| cache read | {usage.cache_read_tokens:,} |",
        f"| cache write | {usage.cache_creation_tokens:,} |",
        "",
        f"{session.state.user_turns} turn(s), {session.state.model_turns} model request(s); "
        f"cost: {price}.",
    ]
    data = {
        **usage.to_dict(),
        "user_turns": session.state.user_turns,
        "model_turns": session.state.model_turns,
        "cost_usd": cost,
    }
    if session.agent.context is not None:  # the context window's fill (see /context)
        report = session.context_report()
        lines.append(
            f"Context: {report.used:,} of {report.window:,} tokens ({report.share:.0%}); "
            "`/context` shows what fills it."
        )
        data |= {"context_tokens": report.used, "context_window": report.window}
    return CommandResult(markdown="\n".join(lines), data=data)


@command("permissions", help="Show the permission mode and the active rules.")
async def permissions_command(session: AgentSession, args: str) -> CommandResult:
    head = f"Permission mode: **{session.mode}**."
    rules = session.gate.list_rules()
    if not rules:
        return CommandResult(markdown=f"{head} No rules.", data=[])
    lines = [head, "", "| rule | effect | from |", "| --- | --- | --- |"]
    for rule in rules:
        source = rule.source.label + (f" ({rule.source.path})" if rule.source.path else "")
        lines.append(f"| `{_cell(rule.text)}` | {rule.behavior} | {_cell(source)} |")
    return CommandResult(markdown="\n".join(lines), data=[r.text for r in rules])
