"""Parsing ``SKILL.md``: YAML frontmatter between ``---`` lines, then the body.

The frontmatter starts with a ``---`` line at column 1 on the file's first
line and ends at the next ``---`` line at column 1 (inside YAML, a line that
is exactly ``---`` can only be a document marker, so this never cuts a
multi-line value short). A file without frontmatter is all body. A UTF-8
byte-order mark and Windows line ends are accepted.

Keys, as Claude Code and MewCode write them:

* ``name`` (required; no spaces, ``/`` or ``\\``; lower-cased);
* ``description``; ``allowed_tools`` or ``allowed-tools`` (a YAML list, or a
  comma- or space-separated string; ``Bash(git add:*)`` stays one entry);
* ``mode`` (``inline`` | ``fork``; Claude Code's ``context: fork`` too),
  ``fork_context`` (``none`` | ``recent`` | ``full``), ``model``: an invalid
  value falls back (inline, none) with a warning;
* ``disable-model-invocation``, ``user-invocable``, ``argument-hint``.

Other keys (``license``, ``version``, ``metadata``, ...) are tolerated.
Problems that make a file unusable raise ``SkillError`` with the file, the
line and the reason.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from ..errors import SkillError
from .skill import FORK_CONTEXTS, MODES, ForkContext, Skill, SkillMode

__all__ = [
    "parse_skill",
    "skill_key",
    "split_allowed_tools",
    "split_frontmatter",
    "validate_name",
]

_FENCE = "---"
#: libyaml's loader where installed: a catalog of hundreds of skills loads ~10x faster
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """``(frontmatter, body, body_line)``: the YAML text (``None`` when the
    file has none), the body, and the 1-based line where the body starts.
    Raises ``SkillError`` when the frontmatter is opened and never closed."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if lines[0].rstrip() != _FENCE:
        return None, text, 1
    for i in range(1, len(lines)):
        if lines[i].rstrip() == _FENCE:
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]), i + 2
    raise SkillError("the frontmatter opened on line 1 is never closed with a '---' line", line=1)


def split_allowed_tools(value: str) -> list[str]:
    """``"Read, Grep Bash(git add:*)"`` → ``["Read", "Grep", "Bash(git add:*)"]``:
    commas and spaces separate entries, except inside parentheses."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in value:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        if depth == 0 and (ch == "," or ch.isspace()):
            if current:
                out.append("".join(current))
                current = []
            continue
        current.append(ch)
    if current:
        out.append("".join(current))
    return out


def skill_key(name: str) -> str:
    """How skill names compare: stripped, Unicode-normalised (NFKC: a
    full-width or ligature spelling is the same name) and case-folded."""
    return unicodedata.normalize("NFKC", name.strip()).casefold()


def validate_name(value: str) -> str:
    """``value`` as a skill name (``skill_key``: stripped, normalised,
    case-folded); raises ``ValueError`` saying what is wrong."""
    name = skill_key(value)
    if not name:
        raise ValueError("the name is empty")
    if any(ch.isspace() for ch in name):
        raise ValueError(f"the name {value.strip()!r} contains a space")
    if "/" in name or "\\" in name:
        raise ValueError(f"the name {value.strip()!r} contains a '/' or '\\'")
    if _CONTROL.search(name) or any(unicodedata.category(ch) == "Cf" for ch in name):
        raise ValueError(
            f"the name {value.strip()!r} contains a control character or an invisible one"
        )
    if name.startswith("."):
        raise ValueError(f"the name {value.strip()!r} starts with '.'")
    return name


def _line_of(frontmatter: str, key: str) -> int | None:
    """The file line of top-level ``key:`` in the frontmatter (which starts on line 2)."""
    pattern = re.compile(rf"^{re.escape(key)}\s*:")
    for i, line in enumerate(frontmatter.split("\n")):
        if pattern.match(line):
            return i + 2
    return None


def _text(value: Any) -> str | None:
    """A scalar as text (YAML may read ``1.0`` or ``true`` as non-strings)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value).lower() if isinstance(value, bool) else str(value)
    return None


def _tools(value: Any) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str):
        return split_allowed_tools(value)
    if isinstance(value, list):
        items = [_text(v) for v in value]
        if any(i is None for i in items):
            return None
        return [t.strip() for t in items if t and t.strip()]  # type: ignore[union-attr]
    return None


def _flag(meta: dict[str, Any], key: str, default: bool, warnings: list[str]) -> bool:
    value = meta.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    warnings.append(f"{key} must be true or false, not {value!r}; using {str(default).lower()}")
    return default


def parse_skill(text: str, *, path: Path | None = None, default_name: str | None = None) -> Skill:
    """Parse the text of one ``SKILL.md`` (``path`` names it in errors and is
    kept on the skill). Raises ``SkillError`` with file, line and reason.
    ``default_name``: a command file's (``commands/<name>.md``), which may
    have no frontmatter and is named after the file."""
    where = str(path) if path is not None else None
    try:
        frontmatter, body, _ = split_frontmatter(text)
    except SkillError as exc:
        raise SkillError(exc.reason, path=where, line=exc.line) from None
    if frontmatter is None and default_name is not None:
        frontmatter = ""
    if frontmatter is None:
        raise SkillError(
            "no frontmatter: a SKILL.md starts with a '---' line, then 'name: ...', then '---'",
            path=where,
            line=1,
        )
    try:
        meta = yaml.load(frontmatter, Loader=_LOADER) if frontmatter.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillError(
            f"the frontmatter is not valid YAML: {problem}", path=where, line=line
        ) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise SkillError(
            f"the frontmatter must be a mapping of keys, not {type(meta).__name__}",
            path=where,
            line=2,
        )

    raw_name = default_name if default_name is not None else _text(meta.get("name"))
    if raw_name is None:
        if "name" not in meta:
            why = "the frontmatter has no 'name'"
        else:
            why = "'name' is empty" if meta["name"] is None else "'name' must be text"
        raise SkillError(why, path=where, line=_line_of(frontmatter, "name") or 2)
    try:
        name = validate_name(raw_name)
    except ValueError as exc:
        raise SkillError(str(exc), path=where, line=_line_of(frontmatter, "name")) from None

    warnings: list[str] = []
    description = _text(meta.get("description"))
    if description is None and meta.get("description") is not None:
        warnings.append("description is not text; ignored")
    tools: list[str] = []
    for key in ("allowed_tools", "allowed-tools"):
        found = _tools(meta.get(key))
        if found is None:
            warnings.append(f"{key} must be a list or a comma-separated string; ignored")
            continue
        tools += [t for t in found if t not in tools]

    mode: SkillMode = "inline"
    raw_mode = _text(meta.get("mode"))
    if raw_mode is None and _text(meta.get("context")) == "fork":  # Claude Code's spelling
        raw_mode = "fork"
    if raw_mode is not None:
        if raw_mode.strip().lower() in MODES:
            mode = raw_mode.strip().lower()  # type: ignore[assignment]
        else:
            warnings.append(f"mode {raw_mode!r} is not inline or fork; running it inline")
    fork_context: ForkContext = "none"
    raw_context = _text(meta.get("fork_context"))
    if raw_context is not None:
        if raw_context.strip().lower() in FORK_CONTEXTS:
            fork_context = raw_context.strip().lower()  # type: ignore[assignment]
        else:
            warnings.append(f"fork_context {raw_context!r} is not none, recent or full; using none")
    model = _text(meta.get("model"))
    hint = meta.get("argument-hint")
    if isinstance(hint, list):
        hint = " ".join(str(h) for h in hint)
    return Skill(
        name=name,
        description=" ".join((description or "").split()),
        body=body.strip("\n"),
        allowed_tools=tuple(tools),
        mode=mode,
        fork_context=fork_context,
        model=model.strip() if model and model.strip() not in ("", "inherit") else None,
        model_invocable=not _flag(meta, "disable-model-invocation", False, warnings),
        user_invocable=_flag(meta, "user-invocable", True, warnings),
        argument_hint=_text(hint) or "",
        path=path if path is not None else Path("SKILL.md"),
        warnings=tuple(warnings),
    )
