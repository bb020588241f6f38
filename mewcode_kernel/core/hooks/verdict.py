"""What one hook run decided (``Verdict``), read from its exit code and
output: the reference design's exit codes plus Claude Code's JSON.

Exit 0 passes; a JSON object on stdout may then say more (``decision``,
``reason``, ``hookSpecificOutput`` {``permissionDecision``,
``permissionDecisionReason``, ``updatedInput``, ``additionalContext``},
``additionalContext``, ``continue`` + ``stopReason``, ``systemMessage``).
Plain stdout of a ``UserPromptSubmit`` or ``SessionStart`` hook is context
for the model, as in Claude Code. Exit 2 blocks a blocking event (reason:
stderr, else stdout) and keeps a ``Stop`` / ``SubagentStop`` turn going;
after ``PostToolUse`` / ``PostToolUseFailure`` its stderr goes to the
model. Anything else is a failure, and a failure passes. An ``agent``
hook's ``{"ok": false, "reason"}`` is a block; a ``PermissionRequest``
hook answers with ``hookSpecificOutput.decision`` {``behavior``
allow|deny, ``message``, ``updatedInput``}.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..lifecycle import BLOCKING_EVENTS, FEEDBACK_EVENTS, STOP_EVENTS, HookEvent

__all__ = ["Verdict", "from_exit", "from_json", "from_text"]

Permission = Literal["allow", "deny", "ask"]
_TEXT_IS_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart", "SessionResume"})


@dataclass(kw_only=True)
class Verdict:
    blocked: bool = False
    reason: str = ""
    context: list[str] = field(default_factory=list)
    updated_input: dict[str, Any] | None = None
    permission: Permission | None = None
    permission_reason: str = ""
    stop: bool = False
    stop_reason: str = ""
    message: str = ""
    failure: str | None = None

    @property
    def outcome(self) -> str:
        """One word for the row: ``failed``, ``blocked``, ``stopped``, the
        permission decided, ``context`` or ``passed``."""
        if self.failure is not None:
            return "failed"
        if self.blocked:
            return "blocked"
        if self.stop:
            return "stopped"
        if self.permission is not None:
            return self.permission
        if self.updated_input is not None:
            return "changed input"
        if self.context:
            return "added context"
        return "passed"


def from_json(event: HookEvent, data: Mapping[str, Any]) -> Verdict:
    """A JSON object a hook printed (or an http hook answered)."""
    v = Verdict()
    if data.get("continue") is False:
        v.stop = True
        v.stop_reason = str(data.get("stopReason") or "")
    decision = data.get("decision")
    reason = str(data.get("reason") or "")
    if decision == "block" or data.get("ok") is False:
        v.blocked = True
        v.reason = reason
    elif decision == "approve" and event == "PreToolUse":
        v.permission, v.permission_reason = "allow", reason
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, Mapping):
        decided = specific.get("permissionDecision")
        if decided in ("allow", "deny", "ask"):
            v.permission = decided
            v.permission_reason = str(specific.get("permissionDecisionReason") or reason)
        updated = specific.get("updatedInput")
        if isinstance(updated, Mapping):
            v.updated_input = dict(updated)
        extra = specific.get("additionalContext")
        if isinstance(extra, str) and extra.strip():
            v.context.append(extra)
        _permission_request(v, event, specific.get("decision"))
    updated = data.get("updatedInput")
    if v.updated_input is None and isinstance(updated, Mapping):
        v.updated_input = dict(updated)
    extra = data.get("additionalContext")
    if isinstance(extra, str) and extra.strip():
        v.context.append(extra)
    message = data.get("systemMessage")
    if isinstance(message, str) and message.strip():
        v.message = message.strip()
    return v


def _permission_request(v: Verdict, event: HookEvent, decided: Any) -> None:
    """A ``PermissionRequest`` hook's answer for the person it stands in for."""
    if event != "PermissionRequest" or not isinstance(decided, Mapping):
        return
    behavior = decided.get("behavior")
    if behavior in ("allow", "deny"):
        v.permission = behavior
        v.permission_reason = str(decided.get("message") or "")
    updated = decided.get("updatedInput")
    if behavior == "allow" and isinstance(updated, Mapping):
        v.updated_input = dict(updated)


def from_text(event: HookEvent, stdout: str) -> Verdict:
    """What exit 0 with this stdout means."""
    text = stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            return Verdict(failure=f"printed invalid JSON ({exc})")
        if isinstance(data, Mapping):
            return from_json(event, data)
    if text and event in _TEXT_IS_CONTEXT:
        return Verdict(context=[text])
    return Verdict()


def from_exit(event: HookEvent, code: int, stdout: str, stderr: str) -> Verdict:
    """A shell hook's verdict from its exit code and output."""
    if code == 0:
        return from_text(event, stdout)
    if code == 2 and (event in BLOCKING_EVENTS or event in STOP_EVENTS):
        reason = stderr.strip() or stdout.strip() or "blocked by hook (exit code 2)"
        return Verdict(blocked=True, reason=reason)
    if code == 2 and event in FEEDBACK_EVENTS and stderr.strip():
        return Verdict(blocked=True, reason=stderr.strip())  # Claude Code: stderr to the model
    detail = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    return Verdict(failure=f"exit {code}" + (f": {detail}" if detail else ""))
