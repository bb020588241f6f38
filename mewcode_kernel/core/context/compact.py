"""L2: summarise older turns, keep recent ones verbatim.

Pure pieces, used by ``ContextManager``:

* ``choose_split`` picks where the kept tail starts: never on a message of
  tool results (their calls would be summarised away), preferably on the
  start of a user turn, keeping as much as fits in the keep budget;
* ``summary_request`` builds the request that asks the model for the
  summary: the same system prompt and tools (so the cached prefix is read),
  the older messages made well-formed (dangling calls closed, oversized
  results shortened, the oldest dropped if they cannot fit), and the
  instructions as a final user message;
* ``summary_text`` takes the summary out of the reply; ``summary_message``
  wraps it as the user message that replaces the older turns, carrying the
  compaction record in ``meta["compact"]`` (the session store writes it as
  a ``compact`` marker).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..conversation import close_dangling
from ..events import ResponseDone
from ..messages import Block, Message, TextBlock, ToolResultBlock
from ..providers.base import ModelRequest
from .offload import preview
from .tokens import estimate_messages

__all__ = [
    "COMPACT_META",
    "SUMMARY_CLOSE",
    "SUMMARY_OPEN",
    "CompactionError",
    "choose_split",
    "files_touched",
    "is_summary",
    "is_tool_results",
    "is_turn_start",
    "summary_message",
    "summary_request",
    "summary_text",
]

COMPACT_META = "compact"
SUMMARY_OPEN = "<compact-summary>"
SUMMARY_CLOSE = "</compact-summary>"
_RESULT_CHARS_IN_SUMMARY = 4_000

SUMMARY_INSTRUCTIONS = """\
The conversation is about to be compacted: everything above will be replaced by the summary \
you write now, and the work will continue from it. Write that summary. Do not call any tools; \
answer with text only.

Be specific: name files, functions, commands and error messages exactly. Keep what is needed \
to continue the work and drop what is not. If the conversation begins with an earlier \
summary, fold it in. Use exactly these sections:

## Goal
What the user asked for and wants in the end, with their constraints and preferences.

## Files touched
Each file read, created or edited, with what was learned or changed in it.

## Decisions
Choices made and why, including approaches tried and abandoned.

## Errors and fixes
Errors met, their causes, and how they were fixed (or that they were not).

## Open work
What remains to be done, and the very next step."""


class CompactionError(Exception):
    """The summary could not be made (the reason is the message)."""


def is_tool_results(message: Message) -> bool:
    """A user message answering tool calls."""
    return message.role == "user" and any(isinstance(b, ToolResultBlock) for b in message.content)


def is_summary(message: Message) -> bool:
    """The message that replaced older turns in an earlier compaction."""
    return COMPACT_META in message.meta


def is_turn_start(message: Message) -> bool:
    """A user message that starts a turn (a prompt, not tool results)."""
    return message.role == "user" and not is_tool_results(message) and not is_summary(message)


def choose_split(messages: Sequence[Message], keep_tokens: int) -> int | None:
    """Index ``s``: ``messages[:s]`` are summarised, ``messages[s:]`` kept.

    ``None`` when nothing can be summarised (one message, or only an earlier
    summary before the first possible cut).
    """
    n = len(messages)
    candidates = [
        i
        for i in range(1, n)
        if not is_tool_results(messages[i]) and not (i == 1 and is_summary(messages[0]))
    ]
    if not candidates:
        return None
    tail = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        tail[i] = tail[i + 1] + estimate_messages([messages[i]])
    fitting = [i for i in candidates if tail[i] <= keep_tokens]
    starts = [i for i in fitting if is_turn_start(messages[i])]
    if starts:
        return starts[0]
    return fitting[0] if fitting else candidates[-1]


def files_touched(
    messages: Sequence[Message],
    known: Mapping[str, str] | None = None,
    effects: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Paths the file tools read or edited in ``messages``, merged with
    ``known``; ``effects`` maps a tool name to ``read`` or ``edited``."""
    found: dict[str, str] = dict(known or {})
    for m in messages:
        for call in m.tool_uses:
            path = call.input.get("path")
            effect = (effects or {}).get(call.name)
            if not isinstance(path, str) or not path or effect is None:
                continue
            if effect == "edited":
                found[path] = "edited"
            elif found.get(path) != "edited":
                found[path] = "read"
    return found


def _shorten(message: Message) -> Message:
    """``message`` with tool results over the summary's limit cut to a preview."""
    if not is_tool_results(message):
        return message
    changed = False
    blocks: list[Block] = []
    for b in message.content:
        if isinstance(b, ToolResultBlock) and len(b.text) > _RESULT_CHARS_IN_SUMMARY:
            note = "Shortened for the summary."
            b = ToolResultBlock(
                tool_use_id=b.tool_use_id, content=preview(b.text, note), is_error=b.is_error
            )
            changed = True
        blocks.append(b)
    return Message(role=message.role, content=blocks, meta=message.meta) if changed else message


def _fit(messages: list[Message], budget: int) -> list[Message]:
    """Drop the oldest messages until the rest fit ``budget`` tokens, cutting
    only where the remainder stays well-formed, and say what was dropped."""
    if estimate_messages(messages) <= budget:
        return messages
    total = len(messages)
    start = 0
    while start < total - 1 and estimate_messages(messages[start:]) > budget:
        start += 1
        while start < total - 1 and is_tool_results(messages[start]):
            start += 1
    note = Message(
        role="user",
        content=[
            TextBlock(
                text=f"[The {start} oldest messages of this conversation do not fit in this "
                "request and were left out; summarise what follows.]"
            )
        ],
    )
    return [note, *messages[start:]]


def summary_request(
    base: ModelRequest,
    head: Sequence[Message],
    *,
    budget_tokens: int,
    instructions: str | None = None,
    files: Mapping[str, str] | None = None,
    max_tokens: int | None = None,
) -> ModelRequest:
    """The request asking for a summary of ``head`` (well-formed: every tool
    call answered, first message from the user)."""
    ask = SUMMARY_INSTRUCTIONS
    if files:
        listed = "\n".join(f"- {p} ({how})" for p, how in sorted(files.items()))
        ask += f"\n\nFiles the tools read or edited so far:\n{listed}"
    if instructions and instructions.strip():
        ask += f"\n\nThe user's instructions for this summary: {instructions.strip()}"
    request_msg = Message(role="user", content=[TextBlock(text=ask)])
    body = [_shorten(m) for m in close_dangling(list(head))]
    body = _fit(body, max(budget_tokens - estimate_messages([request_msg]), 1))
    if body and body[0].role != "user":
        body.insert(0, Message(role="user", content=[TextBlock(text="[Earlier messages]")]))
    return ModelRequest(
        system=base.system,
        messages=[*body, request_msg],
        tools=base.tools,
        max_tokens=max_tokens if max_tokens is not None else base.max_tokens,
        model=base.model,
    )


def summary_text(done: ResponseDone) -> str:
    """The summary in a reply; ``CompactionError`` if there is none."""
    text = done.message.text.strip()
    if not text:
        called = ", ".join(c.name for c in done.message.tool_uses)
        why = f"it called tools ({called}) instead" if called else "the reply was empty"
        raise CompactionError(f"the model wrote no summary: {why}")
    if done.stop_reason == "max_tokens":
        text += "\n\n[The summary was cut off at the output limit.]"
    return text


def summary_message(
    summary: str, *, files: Mapping[str, str], record: Mapping[str, Any]
) -> Message:
    """The user message that stands for the summarised turns."""
    parts = [
        SUMMARY_OPEN,
        "Earlier messages of this session were compacted into this summary. Continue the "
        "work from it; re-read files before editing them.",
        "",
        summary.strip(),
    ]
    if files:
        parts += ["", "Files the tools read or edited before this point:"]
        parts += [f"- {p} ({how})" for p, how in sorted(files.items())]
    parts.append(SUMMARY_CLOSE)
    return Message(
        role="user", content=[TextBlock(text="\n".join(parts))], meta={COMPACT_META: dict(record)}
    )
