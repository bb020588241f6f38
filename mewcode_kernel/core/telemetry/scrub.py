"""What may be exported, as attribute values: names from a narrow alphabet,
texts only redacted and bounded.

A value that comes from the model, a server or a file is never exported as
it is. Names (a tool, a model, a hook, a stop reason) are kept only when
they are short and made of the characters names have; anything else
becomes a placeholder, so no prompt, answer or secret rides along in a
name. Texts (prompts, tool inputs and outputs, reasons: only when the user
opted in) pass through the session's redactor (secrets known by value, in
every form), then the credential patterns, then a size bound.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..redaction import looks_like_key, mask_credentials

__all__ = [
    "MAX_NAME",
    "MAX_TEXT",
    "REDACTED",
    "attributes",
    "decision_source",
    "name",
    "text",
    "word",
]

MAX_NAME = 128
MAX_TEXT = 4096
REDACTED = "[REDACTED]"
_NAME = re.compile(r"[A-Za-z0-9_.:/@+\-]+")
# what a hook's or a rule's name may hold: a person wrote it, so spaces too
_LABEL = re.compile(r"[A-Za-z0-9_.:/@+\- ]+")
_WORD = re.compile(r"[a-z_ \-]+")
_PERMISSION_LAYERS = frozenset(
    {"plan", "read-only", "input", "catastrophic", "sandbox", "protected", "session", "mode"}
)


def name(
    value: object, *, other: str = "unknown", limit: int = MAX_NAME, spaces: bool = False
) -> str:
    """``value`` if it is a short name (``spaces``: a label a person wrote),
    else ``other``; a name shaped like a credential is ``[REDACTED]``."""
    if not isinstance(value, str) or not value or len(value) > limit:
        return other
    if not (_LABEL if spaces else _NAME).fullmatch(value):
        return other
    return REDACTED if looks_like_key(value) else value


def word(value: object, *, other: str = "other", limit: int = 40) -> str:
    """A lower-case word or two from a fixed vocabulary (an outcome, a reason)."""
    if isinstance(value, str) and 0 < len(value) <= limit and _WORD.fullmatch(value):
        return value
    return other


def text(value: object, redact: Callable[[str], str], *, limit: int = MAX_TEXT) -> str:
    """``value`` (a text, or JSON-ready data) redacted, credential-shaped runs
    masked, and cut to ``limit`` characters."""
    if isinstance(value, str):
        raw = value
    elif isinstance(value, Mapping | list | tuple):
        raw = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    else:
        raw = str(value)
    # a bounded slice first: the redactor's cost grows with the text
    head = raw[: limit * 4]
    cleaned = mask_credentials(redact(head), REDACTED)
    if len(cleaned) > limit or len(raw) > len(head):
        return cleaned[:limit] + f"… ({len(raw):,} characters in all)"
    return cleaned


def decision_source(decided_by: str) -> tuple[str, str]:
    """``(source, layer)`` of a permission decision's ``decided_by``: who
    decided (``rule``, ``mode``, ``hook``, ``policy``) and the engine layer,
    both from a fixed vocabulary (a rule's text is a detail, never a name)."""
    head = decided_by.split(":", 1)[0].strip()
    if head.startswith("hook"):
        return "hook", "hook"
    if " rule " in f" {head} " or head.endswith("-rule"):
        behavior = head.split(" ", 1)[0]
        return "rule", f"{behavior}-rule" if behavior in {"allow", "ask", "deny"} else "rule"
    if head in {"mode", "plan"}:
        return "mode", head
    if head == "session":
        return "rule", "session"
    return "policy", head if head in _PERMISSION_LAYERS else "other"


def attributes(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` without the ``None`` ones (OpenTelemetry takes no ``None``)."""
    return {k: v for k, v in values.items() if v is not None}
