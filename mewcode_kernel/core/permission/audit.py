"""Audit records: one per permission decision, safe to log (inputs are
summarised and obvious secrets masked)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .engine import Verdict

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


def summarize_input(tool: str, args: Mapping[str, Any]) -> str:
    """A short, secret-masked summary of a call's arguments for logs and events."""
    if tool == "bash":
        return _short(args.get("command"), _MAX_SUMMARY)
    parts: list[str] = []
    for key, value in args.items():
        if key in ("content", "old_string", "new_string") and isinstance(value, str):
            parts.append(f"{key}=<{len(value)} chars>")
        else:
            parts.append(f"{key}={_short(value, 80)}")
    text = " ".join(parts)
    return text if len(text) <= _MAX_SUMMARY else text[: _MAX_SUMMARY - 1] + "…"


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditRecord:
    """One permission decision: which tool, on what, the outcome, and what decided it."""

    tool: str
    call_id: str
    input_summary: str
    outcome: str
    reason: str
    layer: str
    decided_by: str
    mode: str
    rules: tuple[tuple[str, str], ...] = ()  # (rule text, source label)
    at: float = field(default_factory=time.time)

    @classmethod
    def of(
        cls, *, tool: str, call_id: str, args: Mapping[str, Any], verdict: Verdict, mode: str
    ) -> AuditRecord:
        """The record of ``verdict`` for the call ``call_id`` of ``tool``."""
        return cls(
            tool=tool,
            call_id=call_id,
            input_summary=summarize_input(tool, args),
            outcome=verdict.outcome,
            reason=redact(verdict.reason),
            layer=verdict.layer,
            decided_by=redact(verdict.decided_by),
            mode=mode,
            rules=tuple((r.text, r.source.label) for r in verdict.rules),
        )

    def to_dict(self) -> dict[str, Any]:
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
