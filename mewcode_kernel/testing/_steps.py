"""Script steps for ``ScriptedServer``: replies, error statuses, broken streams.

Each step answers one request, rendered in the protocol of that request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.messages import Block, TextBlock, ThinkingBlock, ToolUseBlock
from ..core.usage import Usage

__all__ = [
    "ERROR_MESSAGES",
    "ERROR_TYPES",
    "Stall",
    "WireReply",
    "WireStatus",
    "WireStep",
    "drop_after",
    "raw_stream",
    "reply",
    "sse_error",
    "stall_after",
    "status",
    "usage",
]


@dataclass(eq=False)
class Stall:
    """Where a streamed reply pauses: after ``after`` SSE frames, until
    ``release()`` (or ``timeout`` seconds). ``reached`` is set when it pauses,
    so a test can act (interrupt, cancel) on a response known to be mid-stream."""

    after: int
    timeout: float = 60.0
    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self.released.set()

    def wait(self) -> None:
        """Called by the server at the pause."""
        self.reached.set()
        self.released.wait(self.timeout)


@dataclass(frozen=True, kw_only=True, slots=True)
class WireReply:
    """A streamed reply. ``cut_after``: end the stream after that many SSE
    frames (the connection drops mid-body); ``error``: (type, message) of an
    ``event: error`` frame sent after ``cut_after`` frames instead; ``stall``:
    pause mid-stream (see ``Stall``)."""

    blocks: tuple[Block, ...] = ()
    stop_reason: str | None = None
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=10, output_tokens=5))
    model: str | None = None
    cut_after: int | None = None
    error: tuple[str, str] | None = None
    stall: Stall | None = None
    #: SSE frames sent as they are instead of rendering ``blocks`` (malformed streams)
    raw_frames: tuple[str, ...] | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class WireStatus:
    """An HTTP error response. ``body`` defaults to the protocol's error JSON."""

    status: int
    body: dict[str, Any] | str | None = None
    error_type: str | None = None
    message: str | None = None
    retry_after: float | None = None
    headers: tuple[tuple[str, str], ...] = ()


WireStep = WireReply | WireStatus | Callable[[dict[str, Any]], WireReply | WireStatus]
"""A script entry: a reply, a status, or a function of the request body returning one."""


def reply(
    *blocks: Block | str,
    text: str | None = None,
    thinking: str | None = None,
    tool_calls: Iterable[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str]] = (),
    stop_reason: str | None = None,
    usage: Usage | None = None,
    model: str | None = None,
) -> WireReply:
    """A streamed reply. Positional blocks (or strings, for text) come first, in
    order; then ``thinking``, ``text`` and ``tool_calls`` ((name, args) or
    (name, args, id)). The stop reason defaults to ``tool_use`` when the reply
    calls a tool, else ``end_turn``; ``model`` defaults to the requested one."""
    built: list[Block] = [TextBlock(text=b) if isinstance(b, str) else b for b in blocks]
    if thinking is not None:
        built.append(ThinkingBlock(thinking=thinking, signature=""))
    if text is not None:
        built.append(TextBlock(text=text))
    for call in tool_calls:
        call_id = call[2] if len(call) > 2 else ""
        built.append(ToolUseBlock(id=call_id, name=call[0], input=call[1]))
    return WireReply(
        blocks=tuple(built),
        stop_reason=stop_reason,
        usage=usage or Usage(input_tokens=10, output_tokens=5),
        model=model,
    )


def usage(fresh: int, cached: int, created: int, out: int) -> Usage:
    """A reply's token counts as a cached prompt has them: ``fresh`` input
    tokens, ``cached`` read from and ``created`` written to the cache, ``out``
    output tokens (e.g. ``usage(14, 0, 2650, 40)`` for a first request)."""
    return Usage(
        input_tokens=fresh,
        output_tokens=out,
        cache_read_tokens=cached,
        cache_creation_tokens=created,
    )


def status(
    code: int,
    body: dict[str, Any] | str | None = None,
    *,
    error_type: str | None = None,
    message: str | None = None,
    retry_after: float | None = None,
) -> WireStatus:
    """An HTTP error: e.g. ``status(529)``, ``status(429, retry_after=0)``."""
    return WireStatus(
        status=code, body=body, error_type=error_type, message=message, retry_after=retry_after
    )


def drop_after(n_events: int, then: WireReply | None = None) -> WireReply:
    """``then`` (default: a short text reply) with the connection cut after ``n_events`` SSE frames."""
    base = then or reply(text="This reply is cut off before its end.")
    return replace(base, cut_after=n_events)


def stall_after(n_events: int, then: WireReply | None = None) -> tuple[WireReply, Stall]:
    """``then`` (default: a short text reply) paused after ``n_events`` SSE
    frames, and the ``Stall`` that releases it."""
    stall = Stall(after=n_events)
    base = then or reply(text="This reply pauses half way through.")
    return replace(base, stall=stall), stall


def sse_error(
    error_type: str = "overloaded_error",
    message: str | None = None,
    *,
    after: int = 3,
    then: WireReply | None = None,
) -> WireReply:
    """``then`` (default: a short text reply) interrupted by an ``event: error``
    frame after ``after`` frames; the stream ends there."""
    base = then or reply(text="This reply fails half way through.")
    return replace(
        base,
        cut_after=after,
        error=(error_type, message or ERROR_MESSAGES.get(error_type, error_type)),
    )


ERROR_MESSAGES = {
    "overloaded_error": "Overloaded",
    "rate_limit_error": "Rate limited",
    "api_error": "Internal server error",
}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def raw_stream(*frames: str) -> WireReply:
    """A 200 event stream of exactly these SSE frames (for malformed input)."""
    return WireReply(raw_frames=tuple(frames))
