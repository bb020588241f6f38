"""The OpenAI Responses API provider (``protocol: openai-responses``), on the
official SDK's ``client.responses.create(stream=True)``.

The wire format is two pure pieces, as for Chat Completions:

* ``to_responses_request(request, model, max_tokens)``: the system prompt as
  ``instructions``; user text as ``role: user`` messages, our ``tool_result``
  blocks as ``function_call_output`` items, assistant text as ``role:
  assistant`` messages, ``tool_use`` blocks as ``function_call`` items and
  the model's own reasoning items sent back where they were (before the calls
  they led to), with ``store: false`` (nothing is kept on OpenAI's side) and
  ``include: ["reasoning.encrypted_content"]`` so they can be;
* ``ResponsesEventFold``: folds the stream's events (SDK objects or dicts)
  into ``ModelEvent``s and one final ``ResponseDone``.

A reasoning item travels in the conversation as a ``ThinkingBlock``: its
summary is the thinking text and its ``signature`` holds the item itself
(``REASONING_SIGNATURE`` + JSON of ``id`` and ``encrypted_content``), which only
this provider reads back; Anthropic leaves such blocks out, Chat Completions
drops thinking anyway.

A stream is complete when ``response.completed`` or ``response.incomplete``
arrived; ``response.failed`` and ``error`` events become classified failures
(transient ones retried); a stream that ends without either, or whose events
cannot be read, is retried as incomplete and then reported with what was
wrong.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai

from ..events import ModelEvent, ResponseDone, TextDelta, ThinkingDelta, ToolCallStarted
from ..messages import Block, Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from ..usage import Usage
from ._common import REASONING_SIGNATURE, SdkProvider, fold_sdk_stream, parse_tool_arguments
from ._common import get_field as _get
from ._retry import Failure, RetryPolicy, StreamIncomplete, stream_error_failure
from .base import ModelRequest
from .openai import CallIds, OpenAIProvider, _images, _text, _tool_text, sdk_client, tool_use_ids

__all__ = [
    "REASONING_SIGNATURE",
    "OpenAIResponsesProvider",
    "ResponsesEventFold",
    "ResponsesStreamError",
    "to_responses_request",
]

_KEPT_ITEMS = frozenset({"reasoning", "message", "function_call"})
_INCOMPLETE_STOP = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}


class ResponsesStreamError(Exception):
    """An error the server reported inside the stream (``error``, ``response.failed``)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def malformed(detail: str) -> ResponsesStreamError:
    """A stream that is not the Responses protocol: reported at once, since
    asking again would get the same bytes."""
    return ResponsesStreamError(
        Failure(message=f"malformed Responses stream: {detail}", retryable=False)
    )


# --- request ------------------------------------------------------------------


def _reasoning_item(block: ThinkingBlock) -> dict[str, Any] | None:
    """The Responses reasoning item a thinking block carries, or ``None``."""
    if not block.signature.startswith(REASONING_SIGNATURE):
        return None
    try:
        saved = json.loads(block.signature[len(REASONING_SIGNATURE) :])
    except json.JSONDecodeError:
        return None
    if not isinstance(saved, dict) or not isinstance(saved.get("id"), str):
        return None
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": saved["id"],
        "summary": [{"type": "summary_text", "text": block.thinking}] if block.thinking else [],
    }
    if isinstance(saved.get("encrypted_content"), str):
        item["encrypted_content"] = saved["encrypted_content"]
    return item


def _input_part(part: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions content part as a Responses input part."""
    if part["type"] == "image_url":
        return {"type": "input_image", "image_url": part["image_url"]["url"]}
    return {"type": "input_text", "text": part["text"]}


def _user_items(message: Message) -> list[dict[str, Any]]:
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    out: list[dict[str, Any]] = [
        {
            "type": "function_call_output",
            "call_id": b.tool_use_id,
            "output": f"Error: {_tool_text(b)}" if b.is_error else _tool_text(b),
        }
        for b in results
    ]
    texts = [b.text for b in message.content if isinstance(b, TextBlock) and b.text]
    # tool results' images follow the outputs in a user message, as for Chat Completions
    images = [_input_part(p) for p in _images(results)]
    if images:
        text = [{"type": "input_text", "text": "\n\n".join(texts)}] if texts else []
        out.append({"role": "user", "content": [*images, *text]})
    elif texts:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _assistant_items(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingBlock):
            item = _reasoning_item(block)
            if item is not None:
                out.append(item)
        elif isinstance(block, TextBlock) and block.text:
            out.append({"role": "assistant", "content": block.text})
        elif isinstance(block, ToolUseBlock):
            out.append(
                {
                    "type": "function_call",
                    "call_id": block.id,
                    "name": block.name,
                    "arguments": json.dumps(block.input, ensure_ascii=False),
                }
            )
    # a reasoning item must be followed by what it led to (a response cut
    # during reasoning has nothing after it): the API refuses it alone
    while out and out[-1].get("type") == "reasoning":
        out.pop()
    return out


def to_responses_request(
    request: ModelRequest, model: str, max_tokens: int, *, store: bool = False
) -> dict[str, Any]:
    """The Responses body for ``request`` (without ``stream``); deterministic
    in content and key order."""
    items: list[dict[str, Any]] = []
    for message in request.messages:
        items.extend(_user_items(message) if message.role == "user" else _assistant_items(message))
    body: dict[str, Any] = {"model": model, "input": items, "max_output_tokens": max_tokens}
    if request.system:
        body["instructions"] = request.system
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
                "strict": False,
            }
            for t in request.tools
        ]
    body["store"] = store
    if not store:
        body["include"] = ["reasoning.encrypted_content"]
    return body


# --- response -----------------------------------------------------------------


@dataclass(slots=True)
class _Item:
    """One output item as its events arrive; ``done`` holds the final item."""

    kind: str
    item_id: str = ""
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    encrypted: str | None = None


class ResponsesEventFold:
    """Folds Responses stream events into ``ModelEvent``s.

    ``taken_ids`` are tool-call ids already used in the conversation; a
    ``call_id`` that is empty or taken is replaced by a fresh ``call_<n>``.
    ``result()`` raises ``StreamIncomplete`` unless ``response.completed`` or
    ``response.incomplete`` was seen.
    """

    def __init__(self, taken_ids: Iterable[str] = ()) -> None:
        self._ids = CallIds(taken_ids)
        self._items: dict[int, _Item] = {}
        self._by_id: dict[str, _Item] = {}
        self._usage = Usage()
        self.model = ""
        self.status: str | None = None
        self.incomplete_reason: str | None = None

    def feed(self, event: Any) -> list[ModelEvent]:
        try:
            return self._feed(event)
        except (TypeError, ValueError, AttributeError) as exc:
            raise malformed(f"an event could not be read ({type(exc).__name__})") from exc

    def _feed(self, event: Any) -> list[ModelEvent]:
        kind = _text(_get(event, "type"))
        if not kind:
            raise malformed("an event has no type")
        if kind == "error":
            raise ResponsesStreamError(
                stream_error_failure(
                    _text(_get(event, "code")) or "error", _text(_get(event, "message")), None
                )
            )
        response = _get(event, "response")
        if response is not None:
            self._response(kind, response)
        if kind == "response.output_item.added":
            return self._added(_get(event, "output_index"), _get(event, "item"))
        if kind == "response.output_item.done":
            self._done(_get(event, "output_index"), _get(event, "item"))
            return []
        delta = _text(_get(event, "delta"))
        if not delta:
            return []
        item = self._item_for(event)
        if kind == "response.output_text.delta":
            if item is not None:
                item.text.append(delta)
            return [TextDelta(text=delta)]
        if kind == "response.refusal.delta":
            if item is not None:
                item.refusal.append(delta)
            return [TextDelta(text=delta)]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            if item is not None:
                item.summary.append(delta)
            return [ThinkingDelta(text=delta)]
        if kind == "response.function_call_arguments.delta" and item is not None:
            item.arguments.append(delta)
        return []

    def _response(self, kind: str, response: Any) -> None:
        self.model = _text(_get(response, "model")) or self.model
        if kind == "response.failed":
            error = _get(response, "error")
            raise ResponsesStreamError(
                stream_error_failure(
                    _text(_get(error, "code")) or "response_failed",
                    _text(_get(error, "message")) or "the response failed",
                    None,
                )
            )
        if kind in ("response.completed", "response.incomplete"):
            self.status = _text(_get(response, "status")) or kind.rsplit(".", 1)[1]
            details = _get(response, "incomplete_details")
            self.incomplete_reason = _text(_get(details, "reason")) or None
            usage = _get(response, "usage")
            if usage is not None:
                self._take_usage(usage)
            # the final output is authoritative over the items streamed before it
            for index, item in enumerate(_get(response, "output") or ()):
                if index in self._items or _text(_get(item, "type")) in _KEPT_ITEMS:
                    self._done(index, item)

    def _take_usage(self, usage: Any) -> None:
        total = _get(usage, "input_tokens") or 0
        cached = _get(_get(usage, "input_tokens_details"), "cached_tokens") or 0
        self._usage = Usage(
            input_tokens=max(total - cached, 0),
            output_tokens=_get(usage, "output_tokens") or 0,
            cache_read_tokens=cached,
        )

    def _item_for(self, event: Any) -> _Item | None:
        item = self._by_id.get(_text(_get(event, "item_id")))
        if item is None:
            index = _get(event, "output_index")
            item = self._items.get(index) if isinstance(index, int) else None
        return item

    def _slot(self, index: Any, raw: Any) -> _Item:
        index = index if isinstance(index, int) else len(self._items)
        item = self._items.get(index)
        if item is None:
            item = self._items[index] = _Item(kind=_text(_get(raw, "type")))
        item.item_id = _text(_get(raw, "id")) or item.item_id
        if item.item_id:
            self._by_id[item.item_id] = item
        return item

    def _added(self, index: Any, raw: Any) -> list[ModelEvent]:
        item = self._slot(index, raw)
        if item.kind != "function_call":
            return []
        item.name = _text(_get(raw, "name"))
        item.call_id = self._ids.claim(_text(_get(raw, "call_id")))
        return [ToolCallStarted(id=item.call_id, name=item.name)] if item.name else []

    def _done(self, index: Any, raw: Any) -> None:
        """The final item is authoritative over what its deltas built."""
        item = self._slot(index, raw)
        if item.kind == "function_call":
            item.name = _text(_get(raw, "name")) or item.name
            if not item.call_id:
                item.call_id = self._ids.claim(_text(_get(raw, "call_id")))
            arguments = _get(raw, "arguments")
            if isinstance(arguments, str):
                item.arguments = [arguments]
        elif item.kind == "reasoning":
            summary = [_text(_get(p, "text")) for p in _get(raw, "summary") or ()]
            if any(summary):
                item.summary = ["\n\n".join(s for s in summary if s)]
            encrypted = _get(raw, "encrypted_content")
            item.encrypted = encrypted if isinstance(encrypted, str) else item.encrypted
        elif item.kind == "message":
            parts = list(_get(raw, "content") or ())
            if parts:
                item.text = [_text(_get(p, "text")) for p in parts if _get(p, "type") != "refusal"]
                item.refusal = [_text(_get(p, "refusal")) for p in parts]

    def result(self) -> ResponseDone:
        if self.status is None:
            raise StreamIncomplete("the Responses stream ended before response.completed")
        blocks: list[Block] = []
        calls = 0
        refused = False
        for index in sorted(self._items):
            item = self._items[index]
            if item.kind == "reasoning" and item.item_id:
                saved = {"id": item.item_id, "encrypted_content": item.encrypted}
                signature = REASONING_SIGNATURE + json.dumps(saved, separators=(",", ":"))
                blocks.append(ThinkingBlock(thinking="".join(item.summary), signature=signature))
            elif item.kind == "message":
                text = "".join(item.text) + "".join(item.refusal)
                refused = refused or bool("".join(item.refusal))
                if text:
                    blocks.append(TextBlock(text=text))
            elif item.kind == "function_call":
                calls += 1
                blocks.append(self._tool_use(item))
        return ResponseDone(
            message=Message(role="assistant", content=blocks),
            stop_reason=self._stop_reason(calls > 0, refused),
            usage=self._usage,
            model=self.model,
        )

    def _tool_use(self, item: _Item) -> ToolUseBlock:
        call_id = item.call_id or self._ids.claim("")
        if not item.name:
            error = "The server sent a tool call without a name."
            return ToolUseBlock(id=call_id, name="", input={}, input_error=error)
        raw = "".join(item.arguments)
        if not raw.strip():
            return ToolUseBlock(id=call_id, name=item.name, input={})
        why = " (the response hit the output limit)" if self.incomplete_reason else ""
        args, error = parse_tool_arguments(item.name, raw, why)
        return ToolUseBlock(id=call_id, name=item.name, input=args, input_error=error)

    def _stop_reason(self, has_calls: bool, refused: bool) -> str:
        if self.status == "incomplete":
            return _INCOMPLETE_STOP.get(self.incomplete_reason or "", "max_tokens")
        if has_calls:
            return "tool_use"
        return "refusal" if refused else "end_turn"


# --- client -------------------------------------------------------------------


class _ReadableStream:
    """The SDK stream, with events it cannot read (data that is not JSON)
    reported as a malformed stream rather than a bare decoding error."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._inner: AsyncIterator[Any] = stream.__aiter__()

    def __aiter__(self) -> _ReadableStream:
        return self

    async def __anext__(self) -> Any:
        try:
            event = await self._inner.__anext__()
        except StopAsyncIteration:
            raise
        except (ValueError, TypeError, AttributeError) as exc:
            detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise malformed(f"an event could not be read ({detail})") from exc
        return event

    async def close(self) -> None:
        await self._stream.close()


class OpenAIResponsesProvider(SdkProvider[openai.AsyncOpenAI]):
    """A model behind an OpenAI Responses endpoint (OpenAI or a compatible
    server). ``store`` stays ``False`` unless asked: the conversation, its
    reasoning included, is sent whole each time and nothing is kept server-side."""

    _client_error = openai.OpenAIError

    def __init__(
        self,
        name: str,
        model: str,
        api_key: str | None,
        base_url: str | None = None,
        max_tokens: int = 8192,
        http_client: httpx2.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
        *,
        store: bool = False,
    ) -> None:
        super().__init__(name, model, api_key, base_url, max_tokens, http_client, retry)
        self._store = store

    def _new_client(self) -> openai.AsyncOpenAI:
        return sdk_client(self._api_key, self._base_url, self._http_client)

    def _prepare(self, request: ModelRequest) -> Callable[[], AsyncGenerator[ModelEvent, None]]:
        body = to_responses_request(
            request,
            request.model or self._model,
            request.max_tokens or self._max_tokens,
            store=self._store,
        )
        taken = tool_use_ids(request)

        async def open_stream() -> _ReadableStream:
            stream = await self._sdk().responses.create(**body, stream=True)
            return _ReadableStream(stream)

        return lambda: fold_sdk_stream(open_stream, ResponsesEventFold(taken))

    @staticmethod
    def _classify_sdk(exc: Exception) -> Failure | None:
        if isinstance(exc, ResponsesStreamError):
            return exc.failure
        return OpenAIProvider._classify_sdk(exc)
