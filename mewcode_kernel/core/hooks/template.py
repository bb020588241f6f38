"""The body template of an http hook: text with ``{{ ... }}`` holes filled
from the payload, and nothing else (the reference design used Go's
``text/template`` with its functions left open; here the set is closed).

A hole is ``{{.a.b}}`` (the value at that dot path, as text), ``{{.}}`` or
``{{json .}}`` (the whole payload as JSON), ``{{json .a.b}}`` (the value as
JSON: quoted and escaped, safe inside a JSON body). Any other hole is an
error when the rule is loaded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BodyTemplate", "TemplateError", "as_text"]

_HOLE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_PATH = r"\.(?:[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*)?"
_FORM = re.compile(rf"\s*(?:(json)\s+)?({_PATH})\s*")


class TemplateError(ValueError):
    """A hole the template language does not have."""


def _lookup(payload: Any, path: str) -> Any:
    value = payload
    for part in path.strip(".").split("."):
        if not part:
            continue
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def as_text(value: Any) -> str:
    """A payload value as hooks see it in text: ``None`` → ``""``, strings as
    they are, booleans ``true``/``false``, maps and lists as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return str(value)


@dataclass(frozen=True, slots=True)
class BodyTemplate:
    """A parsed template: literal text and holes, alternating."""

    source: str
    pieces: tuple[tuple[str, str, bool], ...]  # (literal before, path, as JSON)
    tail: str

    @classmethod
    def parse(cls, source: str) -> BodyTemplate:
        pieces: list[tuple[str, str, bool]] = []
        pos = 0
        for hole in _HOLE.finditer(source):
            form = _FORM.fullmatch(hole.group(1))
            if form is None:
                raise TemplateError(
                    f"unsupported template {hole.group(0)!r}: use {{{{.field}}}}, "
                    "{{json .field}} or {{json .}}"
                )
            pieces.append((source[pos : hole.start()], form.group(2), form.group(1) == "json"))
            pos = hole.end()
        rest = source[pos:]
        if "{{" in rest:
            raise TemplateError("an unclosed '{{' in the template")
        return cls(source, tuple(pieces), rest)

    def render(self, payload: Mapping[str, Any]) -> str:
        out: list[str] = []
        for literal, path, as_json in self.pieces:
            out.append(literal)
            value = _lookup(payload, path)
            whole = path == "."
            if as_json or whole:
                out.append(json.dumps(payload if whole else value, sort_keys=True, default=str))
            else:
                out.append(as_text(value))
        out.append(self.tail)
        return "".join(out)
