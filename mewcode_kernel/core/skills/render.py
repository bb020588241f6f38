"""What the model is shown of skills.

* ``catalog_section``: the skills' names and descriptions for the system
  prompt (sorted, whitespace-normalised: byte-stable for the prompt cache);
* ``render_body``: a skill's instructions as they are activated, with the
  arguments filled in;
* ``active_skills_block``: the skills activated so far, carried at the
  start of every later user turn (never in the system prompt).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..tools.base import Tool
from .skill import Skill

__all__ = [
    "ACTIVE_CLOSE",
    "ACTIVE_OPEN",
    "ARGUMENTS",
    "MAX_DESCRIPTION_CHARS",
    "active_skills_block",
    "catalog_section",
    "render_body",
    "resolve_tools",
]

ARGUMENTS = "$ARGUMENTS"
_SKILL_DIR = "${CLAUDE_SKILL_DIR}"
ACTIVE_OPEN = "<active-skills>"
ACTIVE_CLOSE = "</active-skills>"
#: Longer descriptions are cut in the system prompt (some real ones run past 1,000 characters).
MAX_DESCRIPTION_CHARS = 1024


def resolve_tools(entries: Iterable[str], tools: Iterable[Tool]) -> tuple[list[str], list[str]]:
    """The session's tools that ``allowed_tools`` entries name, in tool order,
    and the entries naming none. An entry names a tool by its own name or a
    rule name (``Read``, ``Bash(git add:*)``); its specifier is ignored."""
    tools = list(tools)
    matched: set[str] = set()
    unknown: list[str] = []
    for entry in entries:
        base = entry.split("(", 1)[0].strip()
        hits = {t.name for t in tools if base in t.names_for_rules}
        if not hits:
            unknown.append(entry)
        matched |= hits
    return [t.name for t in tools if t.name in matched], unknown


def catalog_section(skills: Iterable[Skill]) -> str:
    """The system prompt's list of skills the model may load ("" if none)."""
    listed = sorted((s for s in skills if s.model_invocable), key=lambda s: s.name)
    if not listed:
        return ""
    lines = [
        "# Skills",
        "",
        "Skills are packaged instructions for particular tasks. When a task matches a skill's "
        "description, load it with load_skill(name, args) before starting; the user may also run "
        "one by typing /<name>. A loaded skill's instructions come back at the start of each later "
        f"turn in an {ACTIVE_OPEN} block; for the tasks they cover, they take precedence over "
        "general instructions.",
        "",
    ]
    for s in listed:
        text = " ".join(s.description.split())
        if len(text) > MAX_DESCRIPTION_CHARS:
            text = text[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"
        lines.append(f"- **{s.name}**: {text}" if text else f"- **{s.name}**")
    return "\n".join(lines)


def render_body(skill: Skill, args: str = "", *, tools: Iterable[Tool] = ()) -> str:
    """``skill``'s instructions, ready to activate: where its files are, the
    tools it means to use (inline skills), then the body with ``$ARGUMENTS``
    replaced, or the arguments under "## User Request" when the body has no
    placeholder."""
    args = args.strip()
    parts = [
        f"Skill directory: {skill.display_dir} (paths in these instructions are relative to it; "
        "read its files with read_file)."
    ]
    if skill.allowed_tools and skill.mode == "inline":
        names, _ = resolve_tools(skill.allowed_tools, tools)
        here = f" (here: {', '.join(names)})" if names else ""
        parts.append(
            f"This skill is designed to use only these tools: {', '.join(skill.allowed_tools)}"
            f"{here}. Prefer them over other tools when possible."
        )
    body = skill.body.replace(_SKILL_DIR, skill.display_dir)
    if ARGUMENTS in body:
        body = body.replace(ARGUMENTS, args)
    elif args:
        body = f"{body}\n\n## User Request\n\n{args}"
    return "\n\n".join(parts) + "\n\n---\n\n" + body


def active_skills_block(active: Mapping[str, str]) -> str:
    """The ``<active-skills>`` block for the skills activated so far, in the
    order they were first activated ("" if none)."""
    if not active:
        return ""
    sections = [f"## Skill: {name}\n\n{body.strip()}" for name, body in active.items()]
    head = (
        "Skills loaded in this conversation. Follow their instructions for the tasks they cover; "
        "there they take precedence over general instructions."
    )
    return "\n\n".join([ACTIVE_OPEN, head, *sections, ACTIVE_CLOSE])
