"""The live conversation, with an append callback for the session store."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .messages import Message, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = ["Conversation", "close_dangling", "dangling_tool_calls", "repair_tool_pairs"]

CANCELLED_RESULT = (
    "Tool call was not completed: the turn was interrupted before it ran or finished."
)


class Conversation:
    """An ordered list of messages. Every appended message goes to ``on_append``
    at once (the session store writes it to disk); the list is never rewritten
    except by ``replace`` (explicit compaction), which calls ``on_replace``."""

    def __init__(
        self,
        messages: Iterable[Message] = (),
        *,
        on_append: Callable[[Message], None] | None = None,
        on_replace: Callable[[list[Message]], None] | None = None,
    ) -> None:
        self._messages: list[Message] = list(messages)
        self.on_append = on_append
        self.on_replace = on_replace

    @property
    def messages(self) -> list[Message]:
        """A snapshot copy; the conversation itself only grows through ``append``."""
        return list(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def append(self, message: Message) -> None:
        self._messages.append(message)
        if self.on_append is not None:
            self.on_append(message)

    def replace(self, messages: Iterable[Message]) -> None:
        self._messages = list(messages)
        if self.on_replace is not None:
            self.on_replace(list(self._messages))

    def close_dangling(self, note: str = CANCELLED_RESULT) -> int:
        """Answer tool calls that never got a result, so the history stays valid.
        Returns how many were closed."""
        missing = dangling_tool_calls(self._messages)
        if missing:
            self.append(_closing_message(missing, note))
        return len(missing)


def dangling_tool_calls(messages: list[Message]) -> list[ToolUseBlock]:
    """Tool calls in the last assistant message that have no result after it."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "assistant":
            calls = messages[i].tool_uses
            answered = {r.tool_use_id for m in messages[i + 1 :] for r in m.tool_results}
            return [c for c in calls if c.id not in answered]
    return []


def close_dangling(messages: list[Message], note: str = CANCELLED_RESULT) -> list[Message]:
    """A copy of ``messages`` with dangling tool calls answered by error results."""
    missing = dangling_tool_calls(messages)
    if not missing:
        return list(messages)
    out = list(messages)
    # Results must directly follow the assistant message; merge into a trailing user
    # message of results if there is one.
    if out and out[-1].role == "user" and out[-1].tool_results:
        last = out.pop()
        results = [*last.content, *_closing_message(missing, note).content]
        out.append(Message(role="user", content=results, meta=last.meta))
    else:
        out.append(_closing_message(missing, note))
    return out


def _closing_message(calls: list[ToolUseBlock], note: str) -> Message:
    return Message(
        role="user",
        content=[ToolResultBlock(tool_use_id=c.id, content=note, is_error=True) for c in calls],
    )


ORPHAN_NOTE = "(tool results removed here: the calls they answered are not in the conversation)"


def repair_tool_pairs(
    messages: list[Message], note: str = CANCELLED_RESULT
) -> tuple[list[Message], int]:
    """A copy of ``messages`` in which every tool call but those of the last
    assistant message is answered by the message right after it, and every
    result answers a call of the message right before it. Returns the copy
    and how many calls were answered or results dropped.

    A damaged log (a crash between a call and its result, a line lost) can
    leave such a pair broken anywhere; the API rejects the whole history on
    every later request until it is repaired. Missing results are put first
    in the next user message (or in a message of their own when the next one
    is the assistant's); results answering nothing are dropped. The last
    assistant message is left to ``close_dangling``.
    """
    out: list[Message] = []
    fixed = 0
    last_assistant = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    i = 0
    while i < len(messages):
        m = messages[i]
        if m.role == "user" and m.tool_results:
            before = out[-1] if out and out[-1].role == "assistant" else None
            expected = {c.id for c in before.tool_uses} if before is not None else set()
            m, dropped = _drop_orphans(m, expected)
            fixed += dropped
        out.append(m)
        calls = m.tool_uses if m.role == "assistant" else []
        if calls and i < last_assistant:
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            if nxt is not None and nxt.role == "user":
                answered = {r.tool_use_id for r in nxt.tool_results}
                missing = [c for c in calls if c.id not in answered]
                if missing:
                    expected = {c.id for c in calls}
                    kept, dropped = _drop_orphans(nxt, expected)
                    results = {r.tool_use_id: r for r in kept.tool_results}
                    ordered = [
                        results.get(c.id)
                        or ToolResultBlock(tool_use_id=c.id, content=note, is_error=True)
                        for c in calls
                    ]
                    others = [b for b in kept.content if not isinstance(b, ToolResultBlock)]
                    out.append(Message(role="user", content=[*ordered, *others], meta=nxt.meta))
                    fixed += len(missing) + dropped
                    i += 2
                    continue
            elif nxt is None or nxt.role == "assistant":
                out.append(_closing_message(list(calls), note))
                fixed += len(calls)
        i += 1
    return out, fixed


def _drop_orphans(message: Message, expected: set[str]) -> tuple[Message, int]:
    """``message`` without results for calls not in ``expected`` (or repeated)."""
    seen: set[str] = set()
    kept: list = []
    dropped = 0
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            if block.tool_use_id not in expected or block.tool_use_id in seen:
                dropped += 1
                continue
            seen.add(block.tool_use_id)
        kept.append(block)
    if not dropped:
        return message, 0
    if not kept:
        kept = [TextBlock(text=ORPHAN_NOTE)]
    return Message(role=message.role, content=kept, meta=message.meta), dropped
