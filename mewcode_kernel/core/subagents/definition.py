"""Subagent definitions: Markdown with YAML frontmatter, as Claude Code writes
them (``.claude/agents/*.md``); the body is the subagent's system prompt.

Frontmatter: ``name`` (``^[A-Za-z][A-Za-z0-9_-]{0,31}$``) and ``description``
are required; ``tools`` (an allowlist: a comma or space separated string, or
a list), ``disallowedTools``, ``model`` (``inherit``, ``haiku``, ``sonnet``,
``opus`` or a model id), ``maxTurns`` (default 25), ``permissionMode`` and
``background`` are optional; other keys (``color``, ...) are ignored. What
cannot be used falls back with a warning (a bad ``model`` inherits, a bad
``permissionMode`` is ``default``); a file without a name or description is
rejected with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..frontmatter import split_frontmatter
from ..permission.modes import MODES, Mode

__all__ = [
    "DEFAULT_MAX_TURNS",
    "MODEL_ALIASES",
    "AgentDefinition",
    "DefinitionError",
    "DefinitionSource",
    "parse_definition",
]

DEFAULT_MAX_TURNS = 25
MODEL_ALIASES = frozenset({"haiku", "sonnet", "opus"})
DefinitionSource = Literal["built-in", "user", "project"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
_MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@-]*$")
_KEYS = (
    "name", "description", "tools", "disallowedTools", "disallowed_tools", "model", "maxTurns",
    "max_turns", "permissionMode", "permission_mode", "background", "color", "skills",
)  # fmt: skip
_TOOL_CALL = re.compile(r"^([A-Za-z_][\w-]*)\(.*\)$")


class DefinitionError(ValueError):
    """A definition file cannot be used; the message says why."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentDefinition:
    """One subagent role. ``tools is None``: no allowlist (every tool the
    parent may share); ``model`` is ``inherit``, an alias or a model id;
    ``permission_mode`` ``None`` inherits the parent's mode."""

    name: str
    description: str
    system_prompt: str
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    model: str = "inherit"
    max_turns: int = DEFAULT_MAX_TURNS
    permission_mode: Mode | None = None
    background: bool = False
    source: DefinitionSource = "built-in"
    path: Path | None = None
    warnings: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return str(self.path) if self.path else self.source


def parse_definition(
    text: str, *, path: Path | None = None, source: DefinitionSource = "project"
) -> AgentDefinition:
    """Parse one definition file. Raises ``DefinitionError``."""
    front = split_frontmatter(text, _KEYS)
    if front.data is None:
        raise DefinitionError(
            front.error or "no frontmatter: a definition needs a name and a description"
        )
    data = front.data
    warnings: list[str] = []
    if front.lenient:
        warnings.append("the frontmatter is not strict YAML; it was read line by line")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise DefinitionError("'name' is missing")
    name = name.strip()
    if not _NAME.match(name):
        raise DefinitionError(_bad_name(name))
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise DefinitionError("'description' is missing")
    return AgentDefinition(
        name=name,
        description=description.strip(),
        system_prompt=front.body.strip(),
        tools=_tool_list(data.get("tools"), "tools", warnings, empty_means_all=True),
        disallowed_tools=_tool_list(
            data.get("disallowedTools", data.get("disallowed_tools")), "disallowedTools", warnings
        )
        or (),
        model=_model(data.get("model"), warnings),
        max_turns=_max_turns(data.get("maxTurns", data.get("max_turns")), warnings),
        permission_mode=_mode(data.get("permissionMode", data.get("permission_mode")), warnings),
        background=_flag(data.get("background"), "background", warnings),
        source=source,
        path=path,
        warnings=tuple(warnings),
    )


def _bad_name(name: str) -> str:
    if not name[0].isalpha() or not name[0].isascii():
        return f"'name' {name!r} must start with a letter (A-Z or a-z)"
    if len(name) > 32:
        return f"'name' {name!r} has {len(name)} characters; at most 32 are allowed"
    odd = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c in "-_"))})
    return f"'name' {name!r} may hold only letters, digits, '-' and '_', not {''.join(odd)!r}"


def _tool_list(
    value: Any, key: str, warnings: list[str], *, empty_means_all: bool = False
) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        items = [p for p in re.split(r"[,\s]+", value) if p]
    elif isinstance(value, list):
        items = [str(v).strip() for v in value if str(v).strip()]
    else:
        warnings.append(f"'{key}' must be a list or a comma-separated string; ignored")
        return None
    names = tuple(dict.fromkeys(_TOOL_CALL.sub(r"\1", item) for item in items))
    if not names and empty_means_all:
        return None
    return names


def _model(value: Any, warnings: list[str]) -> str:
    if value is None or (isinstance(value, str) and value.strip() in ("", "inherit")):
        return "inherit"
    text = str(value).strip()
    if text in MODEL_ALIASES:
        return text
    if _MODEL_ID.match(text) and (any(c.isdigit() for c in text) or "-" in text or "/" in text):
        return text
    warnings.append(
        f"'model' {text!r} is neither inherit, haiku, sonnet, opus nor a model id; inheriting"
    )
    return "inherit"


def _max_turns(value: Any, warnings: list[str]) -> int:
    if value is None:
        return DEFAULT_MAX_TURNS
    if isinstance(value, bool) or not isinstance(value, int):
        warnings.append(f"'maxTurns' {value!r} is not a whole number; using {DEFAULT_MAX_TURNS}")
        return DEFAULT_MAX_TURNS
    return value if value > 0 else DEFAULT_MAX_TURNS


def _mode(value: Any, warnings: list[str]) -> Mode | None:
    if value is None:
        return None
    if value in MODES:
        return value  # type: ignore[no-any-return]
    warnings.append(f"'permissionMode' {value!r} is not one of {', '.join(MODES)}; using default")
    return "default"


def _flag(value: Any, key: str, warnings: list[str]) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    warnings.append(f"'{key}' {value!r} is not true or false; using false")
    return False
