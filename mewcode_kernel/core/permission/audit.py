"""Audit records: one per permission decision and one per answered "ask",
safe to log (inputs are summarised and obvious secrets masked). The gate
hands every record to one sink; the session writes them to its log as
``permission`` and ``approval`` marker lines."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..tools.base import Tool
from .decision import Decision

__all__ = ["AuditRecord", "redact", "summarize_input"]

_MAX_SUMMARY = 200
_SECRETS = (
    (re.compile(r"(?i)\b([A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)[A-Z0-9_]*=)(\"[^\"]*\"|'[^']*'|\S+)"), r"\1***"),
    (re.compile(r"(?i)(--?(?:password|passwd|token|secret|api-key|apikey|auth|key)(?:=|\s+))(\"[^\"]*\"|'[^']*'|\S+)"), r"\1***"),
    (re.compile(r"(?i)(authorization:\s*(?:bearer|basic|token)?\s*)[^\s'\"]+"), r"\1***"),
    (re.compile(r"(?i)(\b(?:bearer)\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1***"),
    (re.compile(r"(://[^/\s:@]+:)[^@\s/]+@"), r"\1***@"),
    (re.compile(r"\b(?:sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|ghp_[A-Za-z0-9]{20,}|github_pat_\w{20,}|gho_\w{20,}|xox[abprs]-[\w-]{10,}|AKIA[0-9A-Z]{16}|glpat-[\w-]{20,}|AIza[\w-]{30,})"), "***"),
)  # fmt: skip


def redact(text: str) -> str:
    """``text`` with obvious secrets (tokens, passwords, keys in URLs) masked."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def _short(value: Any, limit: int) -> str:
    if isinstance(value, str):
        text = redact(value.replace("\n", "\\n"))
        return text if len(text) <= limit else text[: limit - 1] + "…"
    if isinstance(value, bool | int | float) or value is None:
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return f"<list of {len(value)}>"
    if isinstance(value, Mapping):
        return f"<object with {len(value)} keys>"
    return f"<{type(value).__name__}>"


def summarize_input(tool: Tool, args: Mapping[str, Any]) -> str:
    """A short, secret-masked summary of a call's arguments for logs and events:
    a command in full (up to a limit); otherwise each argument, with texts that
    are not the tool's subject, path or display argument given as a length."""
    if tool.family == "command":
        return _short(tool.subject(dict(args)), _MAX_SUMMARY)
    shown = {*tool.path_args, tool.display_key, tool.subject_arg}
    parts: list[str] = []
    for key, value in args.items():
        if key not in shown and isinstance(value, str):
            parts.append(f"{key}=<{len(value)} chars>")
        else:
            parts.append(f"{key}={_short(value, 80)}")
    text = " ".join(parts)
    return text if len(text) <= _MAX_SUMMARY else text[: _MAX_SUMMARY - 1] + "…"


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditRecord:
    """One permission event: a decision (``kind="permission"``: the outcome and
    what decided it) or how an "ask" was answered (``kind="approval"``)."""

    kind: Literal["permission", "approval"]
    tool: str
    call_id: str
    mode: str
    input_summary: str = ""
    outcome: str = ""
    reason: str = ""
    layer: str = ""
    decided_by: str = ""
    rules: tuple[tuple[str, str], ...] = ()  # (rule text, source label)
    allowed: bool | None = None
    by: str = ""
    rules_added: tuple[str, ...] = ()
    note: str | None = None
    at: float = field(default_factory=time.time)

    @classmethod
    def of(
        cls, *, tool: Tool, call_id: str, args: Mapping[str, Any], decision: Decision, mode: str
    ) -> AuditRecord:
        """The record of ``decision`` for the call ``call_id`` of ``tool``."""
        return cls(
            kind="permission",
            tool=tool.name,
            call_id=call_id,
            input_summary=summarize_input(tool, args),
            outcome=decision.outcome,
            reason=redact(decision.reason),
            layer=decision.layer,
            decided_by=redact(decision.decided_by),
            mode=mode,
            rules=tuple((r.text, r.source.label) for r in decision.rules),
        )

    @classmethod
    def approval(
        cls,
        *,
        tool: Tool,
        call_id: str,
        mode: str,
        allowed: bool,
        by: str,
        rules_added: tuple[str, ...] = (),
        note: str | None = None,
    ) -> AuditRecord:
        """The record of how the "ask" for ``call_id`` was answered, and by whom."""
        return cls(
            kind="approval",
            tool=tool.name,
            call_id=call_id,
            mode=mode,
            allowed=allowed,
            by=by,
            rules_added=rules_added,
            note=redact(note) if note else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """The marker line's fields (its ``type`` is ``kind``)."""
        if self.kind == "approval":
            data: dict[str, Any] = {
                "call_id": self.call_id,
                "tool": self.tool,
                "allowed": self.allowed,
                "by": self.by,
                "rules_added": list(self.rules_added),
                "mode": self.mode,
                "at": self.at,
            }
            if self.note:
                data["note"] = self.note
            return data
        return {
            "kind": "permission_audit",
            "tool": self.tool,
            "call_id": self.call_id,
            "input": self.input_summary,
            "outcome": self.outcome,
            "reason": self.reason,
            "layer": self.layer,
            "decided_by": self.decided_by,
            "mode": self.mode,
            "rules": [{"rule": text, "source": source} for text, source in self.rules],
            "at": self.at,
        }

    def to_json(self) -> str:
        """One line of JSON, for the session log."""
        return json.dumps(self.to_dict(), ensure_ascii=False)
