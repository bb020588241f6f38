"""The one approval flow: ``ApprovalFlow``.

``settle`` is the one place a call's permission is decided: the gate's
answer (rules, mode, protected paths, the sandbox layer), what a
``PreToolUse`` hook said, and, when that is "ask", a person's answer (or
the headless policy when nobody can be asked). ``ask_person`` asks for
what no rule, mode or policy may approve (running a failed command again
without the sandbox) through the same path. Background work gets a flow of
its own (``for_task``): the same front end, its requests tagged with the
task and given up after a timeout.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from ..events import AgentEvent, ApprovalRequested, ApprovalResolved, PermissionDecided
from ..lifecycle import HookOutcome, Lifecycle
from ..mcp.elicitation import ElicitationHandler
from ..messages import ToolUseBlock
from ..permission.decision import Decision
from ..permission.seam import (
    ApprovalAnswer,
    ApprovalHandler,
    ApprovalRequest,
    NobodyToAsk,
    PermissionGate,
)
from ..tools.base import Tool

__all__ = ["HEADLESS_ENV", "ApprovalFlow", "Settled", "headless_policy"]

HEADLESS_ENV = "MEWCODE_HEADLESS_APPROVAL"


def headless_policy(env: Mapping[str, str] | None = None) -> bool:
    """Whether "ask" is allowed when nobody can be asked (``MEWCODE_HEADLESS_APPROVAL``:
    ``deny``, the default, or ``allow``)."""
    value = (env if env is not None else os.environ).get(HEADLESS_ENV, "deny").strip().lower()
    if value not in {"allow", "deny", ""}:
        raise ValueError(f"{HEADLESS_ENV} must be 'allow' or 'deny', not {value!r}")
    return value == "allow"


@dataclass(frozen=True, kw_only=True, slots=True)
class Settled:
    """How a call's permission ended: ``allowed``, or the ``refusal`` the
    model is told."""

    allowed: bool
    refusal: str = ""


class ApprovalFlow:
    """Who answers an "ask": the front end's ``handler`` (``None``: nobody
    can be asked, and the headless policy, ``headless_allow``, decides).

    They are the front end's to set per cell (a notebook cell that can show
    a card, or a headless run), with ``background``, who answers for the
    work it starts in the background; everything else about an approval
    happens here."""

    def __init__(
        self,
        handler: ApprovalHandler | None = None,
        *,
        headless_allow: bool | None = None,
        background: ApprovalHandler | None = None,
    ) -> None:
        self.handler = handler
        self.headless_allow = headless_policy() if headless_allow is None else headless_allow
        #: who answers background work's asks (the task boards; ``None``: the policy)
        self.background = background
        #: who fills in an MCP server's form (the cell's card; ``None``: declined)
        self.elicit: ElicitationHandler | None = None

    def for_task(self, task_id: str, timeout: float) -> ApprovalFlow:
        """The flow of a background task: ``background`` (the task boards;
        ``None``: the headless policy) asked with the task's id, denied when
        nobody answers within ``timeout`` seconds."""
        front = self.background
        if front is None:
            return ApprovalFlow(None, headless_allow=self.headless_allow)
        asking: ApprovalHandler = front

        async def ask(request: ApprovalRequest) -> ApprovalAnswer:
            try:
                return await asyncio.wait_for(asking(replace(request, task_id=task_id)), timeout)
            except TimeoutError:
                return ApprovalAnswer(
                    allow=False, note=f"nobody answered within {timeout:g} s, so it was denied"
                )

        return ApprovalFlow(ask, headless_allow=self.headless_allow)

    async def settle(
        self,
        call: ToolUseBlock,
        tool: Tool,
        decision: Decision,
        hook: HookOutcome,
        *,
        gate: PermissionGate,
        lifecycle: Lifecycle,
        cwd: Path,
    ) -> AsyncIterator[AgentEvent | Settled]:
        """Turn the gate's ``decision``, the ``PreToolUse`` ``hook`` and, for an
        "ask", a person (or the headless policy) into the call's outcome:
        yields the events to show, then one ``Settled``."""
        outcome, reason, decided_by = decision.outcome, decision.reason, decision.decided_by
        if hook.permission is not None and decision.outcome != "deny":
            hook_reason = hook.permission_reason or f"decided by hook {hook.by}"
            if hook.permission == "deny":
                outcome, reason, decided_by = "deny", hook_reason, f"hook {hook.by}"
            elif hook.permission == "allow" and decision.layer == "mode":
                # only the mode's own "ask" yields to a hook: an ask rule, a protected
                # path (.git/hooks, settings) or the sandbox layer still asks
                outcome, reason, decided_by = "allow", hook_reason, f"hook {hook.by}"
            elif hook.permission == "ask":
                outcome, reason, decided_by = "ask", hook_reason, f"hook {hook.by}"
        yield PermissionDecided(call=call, outcome=outcome, reason=reason, decided_by=decided_by)
        if outcome == "deny":
            yield Settled(allowed=False, refusal=f"Permission denied: {reason}")
            return
        if outcome != "ask":
            yield Settled(allowed=True)
            return
        asked = await lifecycle.fire(
            "PermissionRequest",
            tool_name=call.name,
            tool_input=dict(call.input),
            tool_use_id=call.id,
            reason=reason,
            permission_suggestions=_suggestions(gate.suggest(call, tool)),
        )
        for shown_event in asked.events:  # its row says what it decided: no card was shown
            yield shown_event
        if asked.blocked or asked.permission == "deny":
            why = asked.permission_reason or asked.reason or f"denied by hook {asked.by}"
            gate.record_approval(call, tool, allowed=False, by="hook", note=why)
            yield Settled(allowed=False, refusal=f"Permission denied by hook {asked.by}: {why}")
            return
        if asked.permission == "allow" and decision.layer == "mode":
            # as for PreToolUse: an ask rule, a protected path or the sandbox
            # layer still goes to a person
            why = asked.permission_reason or f"allowed by hook {asked.by}"
            gate.record_approval(call, tool, allowed=True, by="hook", note=why)
            yield Settled(allowed=True)
            return
        if self.handler is not None:
            answer: ApprovalAnswer | None = None
            async for event in self._ask(call, tool, reason, gate, lifecycle, cwd, "rule"):
                if isinstance(event, ApprovalAnswer):
                    answer = event
                else:
                    yield event
            if answer is not None:
                note = f" The user said: {answer.note}" if answer.note else ""
                yield Settled(
                    allowed=answer.allow, refusal=f"The user denied this {call.name} call.{note}"
                )
                return
        # nobody can be asked (no handler, or it found nobody): the headless policy
        allowed = self.headless_allow and not decision.personal
        gate.record_approval(call, tool, allowed=allowed, by="headless")
        yield ApprovalResolved(call=call, allowed=allowed, by="headless")
        policy = "allow" if self.headless_allow else "deny"
        yield Settled(
            allowed=allowed,
            refusal=f"Permission denied: {reason}. Nobody can approve it in this run "
            f"(headless; {HEADLESS_ENV}={policy}).",
        )

    async def ask_person(
        self,
        call: ToolUseBlock,
        tool: Tool,
        reason: str,
        *,
        gate: PermissionGate,
        lifecycle: Lifecycle,
        cwd: Path,
    ) -> AsyncIterator[AgentEvent | bool]:
        """A person's explicit yes for what no rule, mode or headless policy may
        approve: yields the events to show, then ``True`` or ``False`` (never
        asked when nobody can be, or in ``dontAsk``)."""
        if self.handler is None or gate.mode == "dontAsk":
            yield False
            return
        answered = False
        async for event in self._ask(call, tool, reason, gate, lifecycle, cwd, "person"):
            if isinstance(event, ApprovalAnswer):
                answered = True
                yield event.allow
            else:
                yield event
        if not answered:  # the handler found nobody to ask
            yield False

    async def _ask(
        self,
        call: ToolUseBlock,
        tool: Tool,
        reason: str,
        gate: PermissionGate,
        lifecycle: Lifecycle,
        cwd: Path,
        kind: Literal["rule", "person"],
    ) -> AsyncIterator[AgentEvent | ApprovalAnswer]:
        """Ask the front end: the event, the ``Notification`` hook, the card,
        the answer recorded (and "always allow" remembered for a rule's ask).
        Yields no answer when the handler raised ``NobodyToAsk``."""
        assert self.handler is not None
        yield ApprovalRequested(call=call, reason=reason)
        shown = await lifecycle.fire(
            "Notification",
            kind="permission_prompt",
            notification_type="permission_prompt",
            title="Permission needed",
            detail=reason,
            message=f"MewCode needs your permission to use {call.name}",
            tool_name=call.name,
        )
        for shown_event in shown.events:
            yield shown_event
        rules = tuple(gate.suggest(call, tool)) if kind == "rule" else ()
        try:
            answer = await self.handler(
                ApprovalRequest(call=call, tool=tool, reason=reason, rules=rules, cwd=cwd)
            )
        except NobodyToAsk:
            return  # no answer: the caller applies what holds when nobody can be asked
        added: tuple[str, ...] = ()
        if kind == "rule" and answer.allow and answer.always:
            added = tuple(gate.remember(call, tool, save=answer.save))
        note = answer.note if kind == "rule" else f"asked: {reason}"[:300]
        gate.record_approval(
            call, tool, allowed=answer.allow, by="user", rules_added=added, note=note
        )
        yield ApprovalResolved(
            call=call, allowed=answer.allow, by="user", rules_added=added, note=answer.note
        )
        yield answer


def _suggestions(rules: list[str] | tuple[str, ...] | object) -> list[dict[str, object]]:
    """The rules the person would be offered, as Claude Code's
    ``permission_suggestions`` (``addRules`` entries)."""
    found = []
    for rule in rules if isinstance(rules, list | tuple) else ():
        name, _, rest = str(rule).partition("(")
        entry: dict[str, object] = {"toolName": name}
        if rest:
            entry["ruleContent"] = rest[:-1] if rest.endswith(")") else rest
        found.append(
            {"type": "addRules", "rules": [entry], "behavior": "allow", "destination": "session"}
        )
    return found
