"""``/plugin``: Claude Code plugins and marketplaces.

``/plugin`` or ``/plugin list`` shows the plugins loaded (whose, from where,
what each brings) and what could not be loaded; ``/plugin marketplace add
PATH|GIT-URL`` adds a marketplace, ``/plugin marketplace list`` shows the
added ones and what they offer; ``/plugin install NAME@MARKET`` installs
into the user's MewCode folder; ``/plugin enable|disable NAME@MARKET`` turns
one on or off. Skills, commands and hooks follow at once; agents and MCP
servers with the next session (restart the kernel).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..plugins import PluginSet, discover_plugins
from ..plugins.install import add_marketplace, install_plugin, known_marketplaces, set_enabled
from ..plugins.marketplace import MarketplaceError
from .registry import CommandResult, command

if TYPE_CHECKING:
    from pathlib import Path

    from ..agent_session import AgentSession

_USAGE = (
    "Usage: `/plugin [list]`, `/plugin marketplace add PATH|GIT-URL`, `/plugin marketplace "
    "list`, `/plugin install NAME@MARKET`, `/plugin enable|disable NAME@MARKET`."
)
_NEXT = "Its skills, commands and hooks are ready now; its agents and MCP servers start with the next session (restart the kernel)."


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _fail(message: str) -> CommandResult:
    return CommandResult(markdown=message, error=True)


def _home(session: AgentSession) -> Path | None:
    return session.skills.catalog.given_home


def _refresh(session: AgentSession) -> None:
    session.skills.catalog.reload()
    if session.hooks is not None:
        session.hooks.reload()


def _listing(found: PluginSet) -> CommandResult:
    rows = []
    lines = []
    if found.plugins:
        lines += [
            "| plugin | version | whose | turned on by | skills/commands | agents | hooks | MCP servers |",
            "| --- | --- | --- | --- | ---: | ---: | ---: | --- |",
        ]
    for p in found.plugins:
        count = len(p.skill_dirs) and sum(1 for d in p.skill_dirs for _ in d.glob("*/SKILL.md"))
        lines.append(
            f"| `{p.name}` | {_cell(p.version or '—')} | {p.scope} | {_cell(p.origin)} "
            f"| {count}/{len(p.command_files)} | {len(p.agent_files)} | {len(p.hooks)} "
            f"| {_cell(', '.join(p.servers) or '—')} |"
        )
        rows.append(
            {"name": p.name, "key": p.key, "scope": p.scope, "origin": p.origin,
             "root": str(p.root), "version": p.version, "commands": len(p.command_files),
             "agents": len(p.agent_files), "hooks": len(p.hooks), "servers": list(p.servers)}
        )  # fmt: skip
    if not found.plugins:
        lines.append(
            "No plugins. Add a marketplace with `/plugin marketplace add PATH|GIT-URL`, then "
            "`/plugin install NAME@MARKET`; or list plugin folders under `plugins:` in your config."
        )
    notes = [*found.notes, *found.problems]
    if notes:
        lines += ["", "Not loaded, or loaded with a note:", *(f"- {_cell(n)}" for n in notes)]
    return CommandResult(markdown="\n".join(lines), data=rows)


async def _marketplace(session: AgentSession, args: str) -> CommandResult:
    action, _, rest = args.partition(" ")
    home = _home(session)
    if action == "add":
        try:
            market = await add_marketplace(rest.strip(), base=session.root, home=home)
        except (MarketplaceError, OSError) as exc:
            return _fail(f"Marketplace not added: {exc}")
        text = f"Added marketplace `{market.name}` ({len(market.entries)} plugin(s))."
        if market.problems:
            text += "\n\nNot installable:\n" + "\n".join(f"- {_cell(p)}" for p in market.problems)
        return CommandResult(
            markdown=text, data={"name": market.name, "plugins": list(market.entries)}
        )
    if action == "list":
        markets, problems = await asyncio.to_thread(known_marketplaces, home)
        lines = [
            f"- `{m.name}` ({m.root}): " + (", ".join(f"`{n}`" for n in m.entries) or "nothing")
            for m in markets
        ] or ["No marketplaces yet: `/plugin marketplace add PATH|GIT-URL`."]
        notes = problems + [p for m in markets for p in m.problems]
        lines += [f"- not usable: {_cell(p)}" for p in notes]
        return CommandResult(markdown="\n".join(lines), data=[m.name for m in markets])
    return _fail(_USAGE)


@command(
    "plugin", help="Plugins and marketplaces (list, install, enable, disable).", usage="[ACTION]"
)
async def plugin_command(session: AgentSession, args: str) -> CommandResult:
    action, _, rest = args.strip().partition(" ")
    rest = rest.strip()
    home = _home(session)
    if action in ("", "list"):
        found = await asyncio.to_thread(discover_plugins, session.root, home=home)
        return _listing(found)
    if action == "marketplace":
        return await _marketplace(session, rest)
    if action == "install" and rest:
        try:
            done = await install_plugin(rest, home=home)
        except (MarketplaceError, OSError) as exc:
            return _fail(f"Plugin not installed: {exc}")
        await asyncio.to_thread(_refresh, session)
        verb = "Updated" if done.replaced else "Installed"
        text = f"{verb} `{done.key}` in `{done.directory}` ({done.files} files, sha256 `{done.sha256[:12]}`). {_NEXT}"
        if done.problems:
            text += "\n\n" + "\n".join(f"- {_cell(p)}" for p in done.problems)
        return CommandResult(
            markdown=text,
            data={"key": done.key, "path": str(done.directory), "sha256": done.sha256},
        )
    if action in ("enable", "disable") and rest:
        try:
            await asyncio.to_thread(set_enabled, rest, action == "enable", home=home)
        except (MarketplaceError, OSError) as exc:
            return _fail(f"Cannot {action} `{rest}`: {exc}")
        await asyncio.to_thread(_refresh, session)
        return CommandResult(
            markdown=f"Plugin `{rest}` {action}d. {_NEXT if action == 'enable' else ''}".strip(),
            data={"key": rest, "enabled": action == "enable"},
        )
    return _fail(_USAGE)
