"""/sandbox and /trust: the OS sandbox's state, and the project's settings
that wait for (or have) the person's trust."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..trust import describe
from .registry import CommandResult, command

if TYPE_CHECKING:
    from ..agent_session import AgentSession

_STATE = {
    "active": "**active**: commands run in bubblewrap",
    "disabled": "**off** (`sandbox.enabled: false`)",
    "unavailable": "**unavailable**",
}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _paths(paths: list[str], limit: int = 12) -> str:
    if not paths:
        return "none"
    shown = ", ".join(f"`{p}`" for p in paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


@command("sandbox", help="Show the OS sandbox commands run in: state, writable and hidden paths.")
async def sandbox_command(session: AgentSession, args: str) -> CommandResult:
    info = session.sandbox.describe()
    state = str(info["state"])
    lines = [f"Sandbox: {_STATE[state]} ({info['reason']})."]
    if state == "active":
        lines += [
            "",
            "| | |",
            "| --- | --- |",
            f"| writable | {_paths(list(info['writable']))} |",  # type: ignore[arg-type]
            f"| read-only inside the project | {_paths(list(info['readonly']))} |",  # type: ignore[arg-type]
            "| kept from being created (an empty read-only folder stands in while a "
            f"command runs) | {_paths(list(info['placeholders']))} |",  # type: ignore[arg-type]
            f"| hidden: your MewCode folder | {_paths(list(info['user_state']))} "  # type: ignore[arg-type]
            f"(shown read-only: {_paths(list(info['user_state_shown']))}) |",  # type: ignore[arg-type]
            f"| hidden (Read deny rules) | {_paths(list(info['hidden']))} |",  # type: ignore[arg-type]
            f"| network | {info['network']} |",
            f"| unix sockets | {_cell(str(info['unix_sockets']))} |",
        ]
        if info["unprotected"]:
            lines.append(
                f"| **not protected** | {_cell('; '.join(map(str, info['unprotected'])))} |"  # type: ignore[call-overload]
            )
    else:
        lines.append(
            "Commands run unsandboxed: only the permission checks stand between them and "
            "your files."
        )
    if info["ignored"]:
        lines.append(
            "\nIgnored until you trust this project: " + "; ".join(map(str, info["ignored"]))  # type: ignore[arg-type]
        )
    lines.append(
        "\n`.mewcode.yaml`: `sandbox: {enabled, network: on|off, allow_write: [...]}`; "
        "`~/.mewcode/config.yaml` only: `sandbox: {allow_unix_sockets: [...]}`."
    )
    return CommandResult(markdown="\n".join(lines), data=info)


@command(
    "trust",
    help="Show what this project's settings would loosen; `/trust yes` trusts them as they are.",
    usage="[yes]",
)
async def trust_command(session: AgentSession, args: str) -> CommandResult:
    trust = session.trust
    wanted = args.strip().lower()
    if wanted in ("yes", "y", "approve"):
        if not trust.items:
            return CommandResult(markdown="This project has no settings that need trust.", data=[])
        trust = session.trust_project()
        started = await session.mcp.start_allowed() if session.mcp is not None else []
        listed = "\n".join(f"- `{i.file}`: {i.detail}" for i in trust.items)
        servers = f"\n\nMCP servers started: {', '.join(started)}." if started else ""
        return CommandResult(
            markdown=f"Trusted this project's settings; they apply from now on:\n\n{listed}"
            + servers,
            data=describe(trust),
        )
    if wanted:
        return CommandResult(markdown="Usage: `/trust` shows, `/trust yes` trusts.", error=True)
    if not trust.items:
        return CommandResult(markdown="This project has no settings that need trust.", data=[])
    state = {
        "approved": "trusted (you approved them)",
        "environment": "trusted (MEWCODE_TRUST_PROJECT=1)",
        "not approved": "**not trusted**: only their deny and ask rules apply",
        "changed": "**changed since you trusted them**: only their deny and ask rules apply",
        "nothing to trust": "trusted",
    }[trust.state]
    lines = [
        f"This project's settings are {state}.",
        "",
        "| file | what it would do |",
        "| --- | --- |",
    ]
    lines += [f"| `{i.file}` | {_cell(i.detail)} |" for i in trust.items]
    if not trust.trusted:
        lines.append("\n`/trust yes` trusts them as they are now (a later change asks again).")
    return CommandResult(markdown="\n".join(lines), data=describe(trust))
