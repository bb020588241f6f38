"""One ACP session: a MewCode ``AgentSession`` the client drives.

Its id is the stored session's id (``.mewcode/sessions/<id>``), created on
disk when the session is opened so the client can name it at once; the
session's writer holds the session's lock for as long as it is open here,
so a notebook resuming it meanwhile is told it is in use (and may fork).

A prompt runs one turn as its own task: ``cancel`` cancels that task, the
loop closes the conversation (unanswered calls answered), the open tool
calls are closed for the client, and the prompt ends ``cancelled``.
Approvals go to the client for the turn (``for_cell``); background work
the turn starts is decided by the headless policy. One turn at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from acp import RequestError
from acp.helpers import update_agent_message_text, update_current_mode

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.events import TurnDone

from .approvals import ClientApprovals
from .commands import command_name, run_chat_command
from .plan import TaskPlan
from .prompts import command_text, prompt_text
from .updates import TurnUpdates

__all__ = ["STOP_REASONS", "AcpSession", "Send"]

log = logging.getLogger(__name__)

Send = Callable[[Any], Awaitable[None]]
"""Sends one update of this session to the client."""

STOP_REASONS = {
    "end_turn": "end_turn",
    "max_turns": "max_turn_requests",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "cancelled": "cancelled",
    "blocked": "end_turn",  # a hook kept the prompt back: the notice said so
}


class AcpSession:
    """A live session of the ACP server (see the module docstring)."""

    def __init__(self, session: AgentSession, approvals: ClientApprovals, send: Send) -> None:
        self.session = session
        self.approvals = approvals
        self._send = send
        self._turn: asyncio.Task[TurnDone | None] | None = None
        self._updates: TurnUpdates | None = None
        self._plan = TaskPlan(session.tasks, send)  # background work outlives its turn
        self.closed = False

    @property
    def id(self) -> str:
        return self.session.session_id or ""

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.done()

    async def prompt(self, blocks: Sequence[Any]) -> str:
        """Run the prompt; its stop reason. ``RequestError`` when the turn
        failed or another is running."""
        if self.closed:
            raise RequestError.invalid_request({"details": "the session is closed"})
        if self.busy:
            raise RequestError.invalid_request(
                {"details": "a turn is running in this session: cancel it or wait for its end"}
            )
        mode = self.session.mode
        command = command_text(blocks)
        if command is not None and command_name(self.session, command) is not None:
            reason = await self._run(self._command(command))
        else:
            reason = await self._run(self._consume(prompt_text(blocks)))
        if self.session.mode != mode:  # /mode, or a role's
            await self._send(update_current_mode(self.session.mode))
        return reason

    async def _command(self, text: str) -> TurnDone | None:
        result = await run_chat_command(self.session, text)
        mark = "✖ " if result.error else ""
        await self._send(update_agent_message_text(f"{mark}{result.markdown}\n"))
        if result.prompt is not None:  # /<skill> args: its instructions are this turn
            return await self._consume(result.prompt)
        return None

    async def _consume(self, text: str) -> TurnDone | None:
        session = self.session
        updates = self._updates = TurnUpdates(
            session.root, session.tools.get, session.safety.redactor.redact
        )
        done: TurnDone | None = None
        async with session.for_cell(approval_handler=self.approvals, background=None):
            async for event in session.run(text):
                if isinstance(event, TurnDone):
                    done = event
                for update in updates.updates(event):
                    await self._send(update)
        return done

    async def _run(self, work: Awaitable[TurnDone | None]) -> str:
        """Run ``work`` as the session's turn task; its stop reason."""
        task = self._turn = asyncio.ensure_future(work)
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the server is stopping: so does the turn
            task.cancel()
            await asyncio.wait({task})
            raise
        if task.cancelled():
            await self._close_calls()
            return "cancelled"
        error = task.exception()
        if error is not None:
            await self._close_calls("failed", "the turn stopped with an error")
            if isinstance(error, RequestError):
                raise error
            log.error("the turn failed", exc_info=error)
            raise RequestError.internal_error({"details": f"{type(error).__name__}: {error}"})
        done = task.result()
        if done is None:
            return "end_turn"
        if done.reason == "error":
            raise RequestError.internal_error({"details": done.error or "the turn failed"})
        return STOP_REASONS.get(done.reason, "end_turn")

    async def _close_calls(self, status: str = "failed", why: str = "cancelled") -> None:
        if self._updates is None:
            return
        for update in self._updates.closing(status, why):
            with contextlib.suppress(Exception):  # the client may be gone
                await self._send(update)

    def cancel(self) -> None:
        """Cancel the running turn, if any (``session/cancel``)."""
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()

    async def aclose(self) -> None:
        """Stop the turn and end the session (its servers stop, its lock goes)."""
        if self.closed:
            return
        self.closed = True
        turn = self._turn
        if turn is not None and not turn.done():
            turn.cancel()
            await asyncio.wait({turn})
        await self._plan.close()
        await self.session.aclose()
