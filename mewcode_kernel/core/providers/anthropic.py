"""The Anthropic Messages API provider.

Construction (key, base URL, HTTP client, retry policy) lives in
``AnthropicProvider``; the wire format is two pure pieces that are easy to
feed recorded transcripts:

* ``to_anthropic_request(request, model, max_tokens)`` builds the request
  body, with the four prompt-caching breakpoints allowed: the last tool, the
  system prompt (tools and system are the stable prefix), the last block of
  the conversation (written for the next request) and the last block before
  the newest assistant message (where the previous request put its tail, so
  this one reads it even when a step added more than the ~20 blocks the
  cache looks back over);
* ``AnthropicStreamFold`` folds the raw stream events (the SDK's
  ``RawMessageStartEvent``... objects, or the same events as plain dicts) into
  our ``ModelEvent``s and one final ``ResponseDone``.

Server-tool blocks (``server_tool_use``, ``web_search_tool_result``, ...) and
unknown block types are skipped: they never reach the ``Message``. A
``pause_turn`` response therefore cannot be resumed with them; MewCode does
not configure server tools, so this only matters for proxies that add them.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anthropic

from ..events import (
    ModelEvent,
    ResponseDone,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    UsageReported,
)
from ..messages import (
    Block,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from ..usage import Usage
from ._common import (
    REASONING_SIGNATURE,
    SdkProvider,
    classify_connection,
    fold_all,
    fold_sdk_stream,
    parse_tool_arguments,
)
from ._common import get_field as _get
from ._retry import Failure, StreamIncomplete, status_failure, stream_error_failure
from .base import ModelRequest, ToolSpec

__all__ = [
    "AnthropicProvider",
    "AnthropicStreamFold",
    "fold_anthropic_events",
    "to_anthropic_request",
]

# Block types that can carry a cache_control breakpoint at the conversation tail.
_CACHEABLE = frozenset({"text", "tool_use", "tool_result"})
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


# --- request ------------------------------------------------------------------


def _cache() -> dict[str, str]:
    return {"type": "ephemeral"}


def _wire_id(tool_id: str) -> str:
    """Anthropic ids must match ``^[a-zA-Z0-9_-]+$``; ids minted by other servers
    (``"llm_version:0"``) are mapped the same way for the call and its result."""
    if tool_id.isascii() and tool_id.replace("_", "").replace("-", "").isalnum():
        return tool_id  # already safe: the common case, without the regex, every request
    return _ID_UNSAFE.sub("_", tool_id) or "toolu_empty"


def _block(block: Block) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text.strip() else None
    if isinstance(block, ThinkingBlock):
        # Unsigned thinking (from another provider's reasoning) would be rejected,
        # and so would an OpenAI reasoning item's stand-in signature.
        if not block.signature or block.signature.startswith(REASONING_SIGNATURE):
            return None
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, ToolUseBlock):
        return {
            "type": "tool_use",
            "id": _wire_id(block.id),
            "name": block.name,
            "input": dict(block.input),
        }
    if isinstance(block, ToolResultBlock):
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": _wire_id(block.tool_use_id),
            "content": _result_content(block),
        }
        if block.is_error:
            out["is_error"] = True
        return out
    raise TypeError(f"unsupported block: {type(block).__name__}")


def _result_content(block: ToolResultBlock) -> str | list[dict[str, Any]]:
    """Plain text as a string (as recorded); text and images as content blocks."""
    if isinstance(block.content, str):
        return block.content
    parts: list[dict[str, Any]] = []
    for part in block.content:
        if isinstance(part, ImageBlock):
            source = part.source
            parts.append(
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": source.media_type,
                        "data": source.data,
                    },
                }
            )
        elif part.text:
            parts.append({"type": "text", "text": part.text})
    return parts or "(no output)"


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}


def _mark_tail(message: dict[str, Any]) -> None:
    """Put a cache breakpoint on the last block of ``message`` that can carry one."""
    for block in reversed(message["content"]):
        if block["type"] in _CACHEABLE:
            block["cache_control"] = _cache()
            return


def to_anthropic_request(request: ModelRequest, model: str, max_tokens: int) -> dict[str, Any]:
    """The Messages API body for ``request`` (without ``stream``).

    Deterministic: the same request always gives the same dict, key order
    included, so the serialised body is byte-stable and the prompt cache hits.
    ``meta`` is dropped; empty text blocks, unsigned thinking and messages left
    empty are skipped (the API rejects them).
    """
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    if request.system:
        body["system"] = [{"type": "text", "text": request.system, "cache_control": _cache()}]
    messages: list[dict[str, Any]] = []
    for message in request.messages:
        content = [b for b in (_block(x) for x in message.content) if b is not None]
        if not content:
            continue
        # Consecutive messages of one role (tool results then a new prompt, or an
        # interrupted turn) are merged: the API wants the roles to alternate.
        if messages and messages[-1]["role"] == message.role:
            messages[-1]["content"].extend(content)
        else:
            messages.append({"role": message.role, "content": content})
    if messages:
        _mark_tail(messages[-1])
        newest = next(
            (i for i in range(len(messages) - 1, 0, -1) if messages[i]["role"] == "assistant"),
            None,
        )
        if newest is not None:
            _mark_tail(messages[newest - 1])
    body["messages"] = messages
    if request.tools:
        tools = [_tool(t) for t in request.tools]
        tools[-1]["cache_control"] = _cache()
        body["tools"] = tools
    return body


# --- response -----------------------------------------------------------------


@dataclass(slots=True)
class _Part:
    kind: str  # text | thinking | redacted_thinking | tool_use | skipped
    chunks: list[str] = field(default_factory=list)
    signature: str = ""
    data: str = ""
    id: str = ""
    name: str = ""
    initial_input: Any = None


_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


class AnthropicStreamFold:
    """Folds raw Messages stream events into ``ModelEvent``s.

    ``feed(event)`` returns the events to pass on now; ``result()`` returns the
    final ``ResponseDone`` or raises ``StreamIncomplete`` if the stream ended
    before ``message_stop`` (or a ``message_delta`` with a stop reason).
    The SDK (unlike this fold) dispatches ``event: error`` as an exception.
    """

    def __init__(self) -> None:
        self._parts: dict[int, _Part] = {}
        self._usage: dict[str, int] = {}
        self.model = ""
        self.stop_reason: str | None = None
        self.saw_message_stop = False

    @property
    def complete(self) -> bool:
        return self.saw_message_stop or self.stop_reason is not None

    def feed(self, event: Any) -> list[ModelEvent]:
        kind = _get(event, "type")
        if kind == "message_start":
            message = _get(event, "message")
            self.model = _get(message, "model") or self.model
            if self._take_usage(_get(message, "usage")):
                return [UsageReported(usage=self.usage)]
        elif kind == "content_block_start":
            return self._start(_get(event, "index"), _get(event, "content_block"))
        elif kind == "content_block_delta":
            part = self._parts.get(_get(event, "index"))
            if part is not None:
                return self._delta(part, _get(event, "delta"))
        elif kind == "message_delta":
            self.stop_reason = _get(_get(event, "delta"), "stop_reason") or self.stop_reason
            if self._take_usage(_get(event, "usage")):
                return [UsageReported(usage=self.usage)]
        elif kind == "message_stop":
            self.saw_message_stop = True
        return []

    def _take_usage(self, usage: Any) -> bool:
        """Note the counts ``usage`` holds; whether it held any."""
        if usage is None:
            return False
        seen = False
        for key in _USAGE_KEYS:
            value = _get(usage, key)
            if isinstance(value, int):
                self._usage[key] = value
                seen = True
        return seen

    @property
    def usage(self) -> Usage:
        """The counts reported so far (``message_delta`` carries the final ones)."""
        return Usage(
            input_tokens=self._usage.get("input_tokens", 0),
            output_tokens=self._usage.get("output_tokens", 0),
            cache_read_tokens=self._usage.get("cache_read_input_tokens", 0),
            cache_creation_tokens=self._usage.get("cache_creation_input_tokens", 0),
        )

    def _start(self, index: Any, block: Any) -> list[ModelEvent]:
        kind = _get(block, "type")
        if not isinstance(index, int):
            return []
        if kind == "text":
            part = self._parts[index] = _Part("text")
            initial = _get(block, "text")
            if isinstance(initial, str) and initial:
                part.chunks.append(initial)
                return [TextDelta(text=initial)]
        elif kind == "thinking":
            part = self._parts[index] = _Part("thinking")
            initial = _get(block, "thinking")
            if isinstance(initial, str) and initial:
                part.chunks.append(initial)
            part.signature = _get(block, "signature") or ""
            return [ThinkingDelta(text=initial)] if part.chunks else []
        elif kind == "redacted_thinking":
            self._parts[index] = _Part("redacted_thinking", data=_get(block, "data") or "")
        elif kind == "tool_use":
            part = _Part("tool_use", id=_get(block, "id") or "", name=_get(block, "name") or "")
            part.initial_input = _get(block, "input")
            self._parts[index] = part
            return [ToolCallStarted(id=part.id, name=part.name)]
        else:
            self._parts[index] = _Part("skipped")
        return []

    def _delta(self, part: _Part, delta: Any) -> list[ModelEvent]:
        kind = _get(delta, "type")
        if kind == "text_delta" and part.kind == "text":
            text = _get(delta, "text")
            if isinstance(text, str) and text:
                part.chunks.append(text)
                return [TextDelta(text=text)]
        elif kind == "thinking_delta" and part.kind == "thinking":
            text = _get(delta, "thinking")
            if isinstance(text, str) and text:
                part.chunks.append(text)
                return [ThinkingDelta(text=text)]
        elif kind == "signature_delta" and part.kind == "thinking":
            part.signature += _get(delta, "signature") or ""
        elif kind == "input_json_delta" and part.kind == "tool_use":
            part.chunks.append(_get(delta, "partial_json") or "")
        return []

    def result(self) -> ResponseDone:
        if not self.complete:
            raise StreamIncomplete("the Anthropic stream ended before message_stop")
        stop_reason = self.stop_reason or "end_turn"
        blocks: list[Block] = []
        for _, part in sorted(self._parts.items()):
            if part.kind == "text":
                text = "".join(part.chunks)
                if text:
                    blocks.append(TextBlock(text=text))
            elif part.kind == "thinking":
                blocks.append(
                    ThinkingBlock(thinking="".join(part.chunks), signature=part.signature)
                )
            elif part.kind == "redacted_thinking":
                blocks.append(RedactedThinkingBlock(data=part.data))
            elif part.kind == "tool_use":
                blocks.append(_tool_use(part, stop_reason))
        return ResponseDone(
            message=Message(role="assistant", content=blocks),
            stop_reason=stop_reason,
            usage=self.usage,
            model=self.model,
        )


def _tool_use(part: _Part, stop_reason: str) -> ToolUseBlock:
    raw = "".join(part.chunks)
    if not raw.strip():
        initial = part.initial_input
        args = dict(initial) if isinstance(initial, Mapping) else {}
        return ToolUseBlock(id=part.id, name=part.name, input=args)
    why = " (the response hit max_tokens)" if stop_reason == "max_tokens" else ""
    args, error = parse_tool_arguments(part.name, raw, why)
    return ToolUseBlock(id=part.id, name=part.name, input=args, input_error=error)


def fold_anthropic_events(events: Iterable[Any]) -> list[ModelEvent]:
    """Fold a whole recorded stream; the last event is the ``ResponseDone``."""
    return fold_all(AnthropicStreamFold(), events)


# --- client -------------------------------------------------------------------


class AnthropicProvider(SdkProvider[anthropic.AsyncAnthropic]):
    """A model behind the Anthropic Messages API (or a compatible endpoint).
    Client, retries and key handling: ``SdkProvider``."""

    _client_error = anthropic.AnthropicError

    def _new_client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self._base_url,
            http_client=self._http_client,
            max_retries=0,
        )

    def _prepare(self, request: ModelRequest) -> Callable[[], AsyncGenerator[ModelEvent, None]]:
        body = to_anthropic_request(
            request, request.model or self._model, request.max_tokens or self._max_tokens
        )
        return lambda: fold_sdk_stream(
            lambda: self._sdk().messages.create(**body, stream=True), AnthropicStreamFold()
        )

    @staticmethod
    def _classify_sdk(exc: Exception) -> Failure | None:
        if isinstance(exc, anthropic.APIStatusError):
            error_type = exc.type if isinstance(exc.type, str) else None
            message = exc.api_message if isinstance(exc.api_message, str) else exc.message
            if exc.status_code < 400:  # `event: error` inside a 200 stream
                return stream_error_failure(error_type, message)
            return status_failure(exc.status_code, error_type, message, exc.response.headers)
        return classify_connection(
            exc,
            timeout=anthropic.APITimeoutError,
            connection=anthropic.APIConnectionError,
            validation=anthropic.APIResponseValidationError,
        )
