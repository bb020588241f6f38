"""Markdown with YAML frontmatter, read as leniently as Claude Code reads it.

The frontmatter sits between a ``---`` line at column 1 and the next ``---``
line; a UTF-8 byte-order mark and HTML comments or blank lines before it are
skipped. When the block is not valid YAML (most often an unquoted value
holding ``": "``, or a multi-line description with ``<example>`` blocks), it
is read line by line instead: a line starting with one of the expected keys
opens that key, every other line continues the value before it.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import yaml

__all__ = ["Frontmatter", "split_frontmatter"]

_COMMENT = re.compile(r"\A(?:\s*<!--.*?-->)*\s*", re.DOTALL)


@dataclass(frozen=True, kw_only=True, slots=True)
class Frontmatter:
    """``data``: the keys (``None`` when the text has no frontmatter);
    ``body``: the rest; ``lenient``: the YAML was broken and read line by
    line; ``error``: why the block could not be read at all."""

    data: dict[str, Any] | None
    body: str
    lenient: bool = False
    error: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def split_frontmatter(text: str, keys: Collection[str] = ()) -> Frontmatter:
    """Split ``text`` into its frontmatter and body. ``keys`` are the keys the
    lenient reader recognises at the start of a line."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    start = _COMMENT.match(text)
    rest = text[start.end() :] if start else text
    if not rest.startswith("---\n") and rest.rstrip("\n") != "---":
        return Frontmatter(data=None, body=text)
    lines = rest.split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        return Frontmatter(data=None, body=text, error="the frontmatter has no closing '---' line")
    block = "\n".join(lines[1:end])
    body = "\n".join(lines[end + 1 :])
    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        data = _lenient(block, keys)
        if not data:
            first = str(exc).splitlines()[0]
            return Frontmatter(data=None, body=body, error=f"the frontmatter is not YAML ({first})")
        return Frontmatter(data=data, body=body, lenient=True)
    if not isinstance(data, dict):
        return Frontmatter(data=None, body=body, error="the frontmatter is not a mapping of keys")
    return Frontmatter(data={str(k): v for k, v in data.items()}, body=body)


def _lenient(block: str, keys: Collection[str]) -> dict[str, Any]:
    known = {k.lower(): k for k in keys}
    found: dict[str, str] = {}
    current: str | None = None
    for line in block.split("\n"):
        head, sep, value = line.partition(":")
        key = known.get(head.strip().lower()) if sep and not line[:1].isspace() else None
        if key is not None:
            current = key
            found[key] = value.strip()
        elif current is not None:
            found[current] = f"{found[current]}\n{line}" if found[current] else line.strip()
    return {k: _scalar(v.strip()) for k, v in found.items()}


def _scalar(value: str) -> Any:
    """A value as YAML would read it when it is simple, else the text itself."""
    if "\n" in value or ": " in value:
        return _unquote(value)
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        return _unquote(value)
    return parsed if isinstance(parsed, (str, int, float, bool, list)) or parsed is None else value


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
