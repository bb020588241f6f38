"""Skill commands: ``/skills [reload]`` lists the skills; ``/<skill> [args]``
runs one (``run_command`` sends names that are skills here).

An inline skill is activated and its rendered instructions come back as the
``prompt`` of the result: the front end runs them as the person's turn. A
fork skill runs through the session's fork runner and its answer is the
result."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..errors import MewcodeError
from ..skills import Skill
from .registry import CommandResult, command, fallback

if TYPE_CHECKING:
    from ..agent_session import AgentSession


def _fail(message: str) -> CommandResult:
    return CommandResult(markdown=message, error=True)


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _mode(skill: Skill) -> str:
    if skill.mode == "inline":
        return "inline"
    model = f", model {skill.model}" if skill.model else ""
    return f"fork (context {skill.fork_context}{model})"


def _row(skill: Skill) -> dict[str, object]:
    return {
        "name": skill.name,
        "description": skill.description,
        "source": skill.source,
        "folder": skill.display_dir,
        "mode": skill.mode,
        "fork_context": skill.fork_context,
        "model": skill.model,
        "allowed_tools": list(skill.allowed_tools),
        "model_invocable": skill.model_invocable,
        "user_invocable": skill.user_invocable,
        "installed_from": skill.install.url if skill.install else None,
        "sha256": skill.install.sha256 if skill.install else None,
    }


@command("skills", help="List the skills (reload: read their folders again).", usage="[reload]")
async def skills_command(session: AgentSession, args: str) -> CommandResult:
    catalog = session.skills.catalog
    if args.strip() == "reload":
        await asyncio.to_thread(catalog.reload)  # the system prompt follows at the next turn
    elif args.strip():
        return _fail(f"Unknown `/skills` action `{args.strip()}`; `/skills` or `/skills reload`.")
    skills = catalog.skills()
    folders = ", ".join(f"`{f.label}`" for f in catalog.folders)
    if not skills:
        text = f"No skills yet. A skill is a folder holding `SKILL.md` in {folders}."
    else:
        lines = [
            "| skill | source | mode | what it does | installed from |",
            "| --- | --- | --- | --- | --- |",
        ]
        for s in skills:
            flags = [] if s.model_invocable else ["only you can run it"]
            flags += [] if s.user_invocable else ["only the agent loads it"]
            note = f" ({'; '.join(flags)})" if flags else ""
            hint = f" `{s.argument_hint}`" if s.argument_hint else ""
            origin = f"{s.install.url} (sha256 `{s.install.sha256[:12]}`)" if s.install else ""
            lines.append(
                f"| `/{s.name}`{_cell(hint)} | {s.source} (`{s.display_dir}`) | {_mode(s)} "
                f"| {_cell(s.description)}{note} | {_cell(origin)} |"
            )
        text = "\n".join(lines) + f"\n\nFolders read (first wins): {folders}."
    if catalog.problems:
        text += "\n\nNot used:\n" + "\n".join(f"- {_cell(p)}" for p in catalog.problems)
    return CommandResult(markdown=text, data=[_row(s) for s in skills])


@fallback
async def run_skill(session: AgentSession, name: str, args: str) -> CommandResult | None:
    """``/<name> args``: run skill ``name`` as the person asked (``None`` if
    there is no such skill)."""
    skills = session.skills
    if name not in skills.catalog:
        return None
    try:
        done = await skills.run(
            name, args, by="user", active=session.state.active_skills, tools=session.tools
        )
    except MewcodeError as exc:
        return _fail(f"Cannot run `/{name}`: {exc}")
    skill = done.skill
    if skill.mode == "fork":
        return CommandResult(markdown=done.text, data={"skill": skill.name, "mode": "fork"})
    note = f" ({done.note})" if done.note else ""
    return CommandResult(
        markdown=f"skill `{skill.name}` from `{skill.display_dir}`{note}",
        data={"skill": skill.name, "mode": "inline", "args": args},
        prompt=done.text,
    )
