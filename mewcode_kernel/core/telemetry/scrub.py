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

import functools
import json
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from ..pricing import price_of
from ..redaction import looks_like_key, mask_credentials

__all__ = [
    "MAX_NAME",
    "MAX_TEXT",
    "REDACTED",
    "attributes",
    "decision_source",
    "hook_outcome",
    "model_name",
    "name",
    "reason",
    "response_model",
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
_REASONS = frozenset(
    {
        # the providers' (Anthropic's, OpenAI's mapped or raw)
        "end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal",
        "stop", "length", "tool_calls", "content_filter", "function_call",
        "model_context_window_exceeded",
        # the loop's and the session's
        "max_turns", "unknown_tools", "cancelled", "error", "hook_stop", "blocked", "refused",
        # a background task's end
        "completed", "failed", "interrupted", "done",
    }
)  # fmt: skip
_HOOK_OUTCOMES = frozenset(
    {"passed", "failed", "blocked", "stopped", "allow", "deny", "ask", "changed input",
     "added context", "started"}
)  # fmt: skip
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
    verdict = _verdict(value, spaces)
    return value if verdict is None else verdict or other


@functools.lru_cache(maxsize=4096)
def _verdict(value: str, spaces: bool) -> str | None:
    """``None``: ``value`` is a name; ``""``: it is not; else what stands for it.
    Cached: a session names the same few tools and models over and over, and
    the credential patterns are the cost."""
    if not (_LABEL if spaces else _NAME).fullmatch(value):
        return ""
    return REDACTED if looks_like_key(value) else None


def word(value: object, *, other: str = "other", limit: int = 40) -> str:
    """A lower-case word or two (a trigger, a state)."""
    if isinstance(value, str) and 0 < len(value) <= limit and _WORD.fullmatch(value):
        return value
    return other


def reason(value: object) -> str:
    """Why a response or a turn ended, from the providers' and the loop's
    vocabulary (a server's own word is ``other``)."""
    return value if isinstance(value, str) and value in _REASONS else "other"


def hook_outcome(value: object) -> str:
    """A hook run's outcome, from the engine's vocabulary."""
    return value if isinstance(value, str) and value in _HOOK_OUTCOMES else "other"


def model_name(value: object, known: Collection[str]) -> str:
    """A model asked for: kept when it is one the session knows (configured,
    or priced); a name the model made up (an ``Agent`` call's ``model``) is
    ``other``."""
    shown = name(value, other="")
    if shown and (shown in known or price_of(shown) is not None):
        return shown
    return "other" if shown or value else "unknown"


def response_model(value: object, requested: str) -> str:
    """The model a response names: kept when it is the requested one or a
    version of it (``gpt-4o`` → ``gpt-4o-2024-08-06``); a server's other
    word is not exported (it could be anything, a prompt's word too)."""
    shown = name(value, other="")
    if not shown or not requested:
        return requested or "unknown"
    if shown.startswith(requested) or requested.startswith(shown):
        return shown
    return "other"


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
