"""An in-process scripted model: the ``Provider`` used by the loop's tests."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.events import (
    ModelEvent,
    ResponseDone,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
)
from ..core.messages import Block, Message, TextBlock, ThinkingBlock, ToolUseBlock
from ..core.providers.base import Labelled, ModelRequest
from ..core.usage import Usage

__all__ = [
    "ScriptError",
    "ScriptedModel",
    "ScriptedReply",
    "collect",
    "reply",
    "text",
    "thinking",
    "tool_call",
]

_ids = itertools.count(1)


class ScriptError(AssertionError):
    """The agent asked the scripted model for more (or fewer) replies than scripted."""


def text(value: str) -> TextBlock:
    return TextBlock(text=value)


def thinking(value: str, signature: str = "sig") -> ThinkingBlock:
    return ThinkingBlock(thinking=value, signature=signature)


def tool_call(
    name: str, args: dict[str, Any] | None = None, *, id: str | None = None
) -> ToolUseBlock:
    return ToolUseBlock(id=id or f"toolu_{next(_ids):04d}", name=name, input=args or {})


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedReply:
    """One scripted model response. ``fail`` raises instead of answering;
    ``retries`` emits that many RetryScheduled events (with partial text) first."""

    blocks: tuple[Block, ...] = ()
    stop_reason: str | None = None
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=10, output_tokens=5))
    fail: BaseException | None = None
    retries: int = 0
    chunk_size: int = 8


def reply(
    *blocks: Block | str,
    stop_reason: str | None = None,
    usage: Usage | None = None,
    fail: BaseException | None = None,
    retries: int = 0,
) -> ScriptedReply:
    """A reply; strings become text blocks. The stop reason defaults to
    ``tool_use`` when the reply calls a tool, else ``end_turn``."""
    built = tuple(TextBlock(text=b) if isinstance(b, str) else b for b in blocks)
    return ScriptedReply(
        blocks=built,
        stop_reason=stop_reason,
        usage=usage or Usage(input_tokens=10, output_tokens=5),
        fail=fail,
        retries=retries,
    )


ScriptEntry = ScriptedReply | Callable[[ModelRequest], ScriptedReply]


class ScriptedModel(Labelled):
    """A ``Provider`` that answers from a script, in order.

    Entries are ``ScriptedReply`` values or callables that build one from the
    request. Every request is kept in ``requests``. Asking past the end of the
    script raises ``ScriptError``; ``assert_all_used()`` fails on leftovers.
    """

    def __init__(
        self,
        script: Iterable[ScriptEntry] = (),
        *,
        name: str = "scripted",
        model: str = "scripted-1",
    ) -> None:
        self._script: list[ScriptEntry] = list(script)
        self._next = 0
        self._name = name
        self._model = model
        self.requests: list[ModelRequest] = []

    def add(self, *entries: ScriptEntry) -> None:
        self._script.extend(entries)

    @property
    def remaining(self) -> int:
        return len(self._script) - self._next

    def assert_all_used(self) -> None:
        if self.remaining:
            raise ScriptError(f"{self.remaining} scripted repl(y/ies) were never requested")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if self._next >= len(self._script):
            raise ScriptError(
                f"unexpected model request #{len(self.requests)}: the script has "
                f"{len(self._script)} repl(y/ies); last message: {_last_text(request.messages)!r}"
            )
        entry = self._script[self._next]
        self._next += 1
        scripted = entry(request) if callable(entry) else entry
        for attempt in range(1, scripted.retries + 1):
            yield TextDelta(text="partial text from a failed attempt ")
            yield RetryScheduled(
                attempt=attempt, max_attempts=scripted.retries + 1, delay=0.0, reason="scripted"
            )
        if scripted.fail is not None:
            raise scripted.fail
        for block in scripted.blocks:
            for event in _block_events(block, scripted.chunk_size):
                yield event
        stop = scripted.stop_reason or default_stop_reason(scripted.blocks)
        yield ResponseDone(
            message=Message(role="assistant", content=list(scripted.blocks)),
            stop_reason=stop,
            usage=scripted.usage,
            model=self._model,
        )


def default_stop_reason(blocks: Iterable[Block]) -> str:
    """A scripted reply's stop reason when none is given: ``tool_use`` when it
    calls a tool, else ``end_turn``."""
    return "tool_use" if any(isinstance(b, ToolUseBlock) for b in blocks) else "end_turn"


def _block_events(block: Block, size: int) -> Sequence[ModelEvent]:
    if isinstance(block, TextBlock):
        return [TextDelta(text=block.text[i : i + size]) for i in range(0, len(block.text), size)]
    if isinstance(block, ThinkingBlock):
        return [ThinkingDelta(text=block.thinking)]
    if isinstance(block, ToolUseBlock):
        return [ToolCallStarted(id=block.id, name=block.name)]
    return []


def _last_text(messages: Sequence[Message]) -> str:
    return messages[-1].text[:80] if messages else ""


async def collect(events: AsyncIterator[Any]) -> list[Any]:
    """Drain an event stream into a list."""
    return [ev async for ev in events]
