"""Who answers a call's "ask" in an ACP session: the client, through
``session/request_permission``.

The options are allow once, always allow (the rules the gate suggests,
for the session), always allow and save them to the project's local
settings (as the notebook card's save box does), and reject. Only an
option this very request offered can allow: an option id the client made
up, one of another request, an answer that does not parse, an error or a
closed connection all deny. A client that cannot answer at all (it
answers "method not found") leaves the headless policy in force
(``NobodyToAsk``), for this request and every later one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from acp import RequestError
from acp.helpers import text_block, tool_content
from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, ToolCallUpdate

from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest, NobodyToAsk

from .updates import acp_kind, diff_of, locations_of, title_of

__all__ = ["OPTIONS", "ClientApprovals", "PermissionAsker"]

log = logging.getLogger(__name__)

_METHOD_NOT_FOUND = -32601

OPTIONS: dict[str, tuple[str, ApprovalAnswer]] = {
    "allow_once": ("allow_once", ApprovalAnswer(allow=True)),
    "allow_always": ("allow_always", ApprovalAnswer(allow=True, always=True)),
    "allow_always_save": ("allow_always", ApprovalAnswer(allow=True, always=True, save=True)),
    "reject_once": ("reject_once", ApprovalAnswer(allow=False)),
}
"""Option id: (ACP kind, the answer it gives)."""


class PermissionAsker(Protocol):
    """The connection's side that asks the client (``AgentSideConnection``)."""

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> Any: ...


def _options(request: ApprovalRequest) -> list[PermissionOption]:
    rules = ", ".join(request.rules)
    if len(rules) > 80:
        rules = rules[:79] + "…"
    names = {
        "allow_once": "Allow once",
        "allow_always": f"Always allow {rules} in this session",
        "allow_always_save": f"Always allow {rules} (save to the project's local settings)",
        "reject_once": "Reject",
    }
    offered = ["allow_once", "allow_always", "allow_always_save", "reject_once"]
    if not request.rules:  # nothing to remember (a run outside the sandbox): once or not
        offered = ["allow_once", "reject_once"]
    return [
        PermissionOption(option_id=o, name=names[o], kind=OPTIONS[o][0])  # type: ignore[arg-type]
        for o in offered
    ]


class ClientApprovals:
    """The ``ApprovalHandler`` of one ACP session."""

    def __init__(
        self,
        client: PermissionAsker,
        session_id: str,
        root: Path,
        redact: Callable[[str], str],
    ) -> None:
        self._client = client
        self._session_id = session_id
        self._root = root
        self._redact = redact
        #: false once the client said it cannot answer: the headless policy decides
        self.can_ask = True

    def tool_call(self, request: ApprovalRequest) -> ToolCallUpdate:
        """The call as the permission request shows it: title, kind, files,
        input, and the diff (or the reason) as its content."""
        call, tool = request.call, request.tool
        diff = diff_of(call, tool, self._root, self._redact)
        content: list[Any] = [diff] if diff is not None else []
        if request.reason:
            content.append(tool_content(text_block(request.reason)))
        return ToolCallUpdate(
            tool_call_id=call.id,
            title=title_of(call, tool),
            kind=acp_kind(tool),  # type: ignore[arg-type]
            status="pending",
            locations=locations_of(call, tool, self._root) or None,
            raw_input=call.input,
            content=content or None,
        )

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        if not self.can_ask:
            raise NobodyToAsk
        options = _options(request)
        offered = {o.option_id for o in options}
        try:
            response = await self._client.request_permission(
                session_id=self._session_id, tool_call=self.tool_call(request), options=options
            )
        except RequestError as exc:
            if exc.code == _METHOD_NOT_FOUND:
                self.can_ask = False
                raise NobodyToAsk from None
            return ApprovalAnswer(allow=False, note=None)
        except Exception as exc:  # a closed connection, an answer that does not parse
            log.warning("permission request failed, so the call is denied: %r", exc)
            return ApprovalAnswer(allow=False)
        return _answer(getattr(response, "outcome", None), offered)


def _answer(outcome: Any, offered: set[str]) -> ApprovalAnswer:
    if isinstance(outcome, AllowedOutcome) and outcome.option_id in offered:
        return OPTIONS[outcome.option_id][1]
    if isinstance(outcome, DeniedOutcome):
        return ApprovalAnswer(allow=False, note="the prompt turn was cancelled")
    return ApprovalAnswer(allow=False)
