"""The live conversation, with an append callback for the session store."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .messages import Message, ToolResultBlock, ToolUseBlock

__all__ = ["Conversation", "close_dangling", "dangling_tool_calls"]

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
