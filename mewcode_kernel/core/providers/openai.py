"""The OpenAI Chat Completions provider, for OpenAI and every compatible server.

Construction lives in ``OpenAIProvider``; the wire format is two pure pieces:

* ``to_openai_request(request, model, max_tokens)``: system message first,
  assistant ``tool_use`` blocks as ``tool_calls`` (JSON-string arguments), our
  ``tool_result`` blocks as separate ``role: "tool"`` messages, thinking dropped;
* ``OpenAIChunkFold``: folds ``chat.completion.chunk``s (SDK objects or dicts)
  into ``ModelEvent``s and one final ``ResponseDone``.

Compatible-server quirks the fold absorbs: tool-call ids that are empty,
``"0"``, repeated in every delta or reused across turns (replaced by
``call_<n>`` when empty or already taken); whole arguments in one delta;
duplicate role chunks; ``content: null``; no ``finish_reason`` at all (tool
calls present means ``tool_use``); a ``choices: []`` usage chunk; extra fields
(``obfuscation``, ``provider``, ``reasoning``...); choices other than index 0
(``n > 1``) are ignored. ``reasoning``/``reasoning_content`` deltas become
``ThinkingDelta``s and an unsigned ``ThinkingBlock``; ``refusal`` text becomes
the message text with stop reason ``refusal``.

The output limit is sent as ``max_completion_tokens`` to api.openai.com (its
reasoning models reject ``max_tokens``) and as ``max_tokens`` elsewhere: it is
the field every compatible server (vLLM, llama.cpp, Ollama, OpenRouter, Groq)
accepts, while ``max_completion_tokens`` is not understood by all of them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2
import openai

from ..events import ModelEvent, ResponseDone, TextDelta, ThinkingDelta, ToolCallStarted
from ..messages import Block, Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from ..usage import Usage
from ._common import (
    SdkProvider,
    classify_connection,
    fold_all,
    fold_sdk_stream,
    parse_tool_arguments,
)
from ._common import get_field as _get
from ._retry import Failure, RetryPolicy, StreamIncomplete, status_failure, stream_error_failure
from .base import ModelRequest

__all__ = [
    "CallIds",
    "OpenAIChunkFold",
    "OpenAIProvider",
    "fold_openai_chunks",
    "sdk_client",
    "to_openai_request",
    "tool_use_ids",
]

MaxTokensField = Literal["max_tokens", "max_completion_tokens"]
_FINISH = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
# Local servers need no key, but the SDK insists on one.
_NO_KEY = "no-key"


# --- request ------------------------------------------------------------------


def _tool_text(block: ToolResultBlock) -> str:
    """A tool result as text: Chat Completions takes no images in tool
    messages, so each image is named here and sent in a user message after
    the tool messages (``_images``)."""
    if isinstance(block.content, str):
        return block.content
    return "\n".join(
        p.text
        if isinstance(p, TextBlock)
        else p.describe()[:-1] + " — attached in the next message]"
        for p in block.content
    )


def _images(results: list[ToolResultBlock]) -> list[dict[str, Any]]:
    """The tool results' images as ``image_url`` parts (data URLs), each after
    a line naming the call it came from."""
    parts: list[dict[str, Any]] = []
    for block in results:
        for image in block.images:
            parts.append(
                {"type": "text", "text": f"{image.describe()} from tool call {block.tool_use_id}:"}
            )
            url = f"data:{image.source.media_type};base64,{image.source.data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _convert(message: Message) -> list[dict[str, Any]]:
    texts = [b.text for b in message.content if isinstance(b, TextBlock) and b.text]
    if message.role == "user":
        results = [b for b in message.content if isinstance(b, ToolResultBlock)]
        out: list[dict[str, Any]] = [
            {
                "role": "tool",
                "tool_call_id": b.tool_use_id,
                "content": f"Error: {_tool_text(b)}" if b.is_error else _tool_text(b),
            }
            for b in results
        ]
        images = _images(results)
        if images:  # after every tool message: they must follow the tool_calls directly
            text = [{"type": "text", "text": "\n\n".join(texts)}] if texts else []
            out.append({"role": "user", "content": [*images, *text]})
        elif texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
        return out
    calls = [
        {
            "id": b.id,
            "type": "function",
            "function": {"name": b.name, "arguments": json.dumps(b.input, ensure_ascii=False)},
        }
        for b in message.content
        if isinstance(b, ToolUseBlock)
    ]
    if not texts and not calls:
        return []
    converted: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        converted["tool_calls"] = calls
    return [converted]


def to_openai_request(
    request: ModelRequest,
    model: str,
    max_tokens: int,
    *,
    max_tokens_field: MaxTokensField = "max_tokens",
) -> dict[str, Any]:
    """The Chat Completions body for ``request`` (without the stream flags).

    Deterministic in content and key order. ``meta`` and thinking are dropped;
    a user message's tool results come first (they must follow the assistant's
    ``tool_calls``), then its text as one user message.
    """
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        messages.extend(_convert(message))
    body: dict[str, Any] = {"model": model, "messages": messages, max_tokens_field: max_tokens}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in request.tools
        ]
    return body


# --- response -----------------------------------------------------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


@dataclass(slots=True)
class _Call:
    server_id: str
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class CallIds:
    """Tool-call ids for one response: a server's id when it is new to the
    conversation, else the next free ``call_<n>``."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self._taken = set(taken)
        self._next = 1

    def claim(self, server_id: str) -> str:
        if server_id and server_id not in self._taken:
            self._taken.add(server_id)
            return server_id
        while f"call_{self._next}" in self._taken:
            self._next += 1
        synthetic = f"call_{self._next}"
        self._taken.add(synthetic)
        return synthetic


def tool_use_ids(request: ModelRequest) -> set[str]:
    """The tool-call ids the conversation already holds."""
    return {b.id for m in request.messages for b in m.content if isinstance(b, ToolUseBlock)}


class OpenAIChunkFold:
    """Folds Chat Completions chunks into ``ModelEvent``s.

    ``taken_ids`` are tool-call ids already used in the conversation; a server
    id that is empty or already taken is replaced by a fresh ``call_<n>``
    (the same one in ``ToolCallStarted`` and in the final ``ToolUseBlock``).
    ``result()`` raises ``StreamIncomplete`` unless a ``finish_reason`` or the
    usage chunk was seen.
    """

    def __init__(self, taken_ids: Iterable[str] = ()) -> None:
        self._ids = CallIds(taken_ids)
        self._text: list[str] = []
        self._refusal: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._usage = Usage()
        self.model = ""
        self.finish_reason: str | None = None
        self.saw_usage = False

    @property
    def complete(self) -> bool:
        return self.finish_reason is not None or self.saw_usage

    def feed(self, chunk: Any) -> list[ModelEvent]:
        self.model = _text(_get(chunk, "model")) or self.model
        usage = _get(chunk, "usage")
        if usage is not None:
            self._take_usage(usage)
        out: list[ModelEvent] = []
        for choice in _get(chunk, "choices") or ():
            if (_get(choice, "index") or 0) != 0:
                continue
            delta = _get(choice, "delta")
            if delta is not None:
                self._delta(delta, out)
            finish = _get(choice, "finish_reason")
            if isinstance(finish, str) and finish:
                self.finish_reason = finish
        return out

    def _take_usage(self, usage: Any) -> None:
        prompt = _get(usage, "prompt_tokens") or 0
        cached = _get(_get(usage, "prompt_tokens_details"), "cached_tokens") or 0
        self._usage = Usage(
            input_tokens=max(prompt - cached, 0),
            output_tokens=_get(usage, "completion_tokens") or 0,
            cache_read_tokens=cached,
        )
        self.saw_usage = True

    def _delta(self, delta: Any, out: list[ModelEvent]) -> None:
        reasoning = _text(_get(delta, "reasoning_content")) or _text(_get(delta, "reasoning"))
        if reasoning:
            self._reasoning.append(reasoning)
            out.append(ThinkingDelta(text=reasoning))
        for sink, key in ((self._text, "content"), (self._refusal, "refusal")):
            text = _text(_get(delta, key))
            if text:
                sink.append(text)
                out.append(TextDelta(text=text))
        for call in _get(delta, "tool_calls") or ():
            self._tool_delta(_get(call, "index"), _get(call, "id"), _get(call, "function"), out)
        legacy = _get(delta, "function_call")
        if legacy is not None:
            self._tool_delta(-1, None, legacy, out)

    def _tool_delta(self, index: Any, server_id: Any, function: Any, out: list[ModelEvent]) -> None:
        index = index if isinstance(index, int) else 0
        server_id = _text(server_id)
        call = self._by_index.get(index)
        # A new id at a known index is a new call (servers that send index 0 for all).
        if call is None or (server_id and call.server_id and server_id != call.server_id):
            call = self._by_index[index] = _Call(server_id=server_id)
            self._calls.append(call)
        elif server_id and not call.server_id and not call.id:
            call.server_id = server_id
        name = _text(_get(function, "name"))
        if name and not call.name:
            call.name = name
        arguments = _text(_get(function, "arguments"))
        if arguments:
            call.arguments.append(arguments)
        if call.name and not call.id:
            call.id = self._ids.claim(call.server_id)
            out.append(ToolCallStarted(id=call.id, name=call.name))

    def result(self) -> ResponseDone:
        if not self.complete:
            raise StreamIncomplete("the chat stream ended without a finish_reason or usage chunk")
        blocks: list[Block] = []
        if self._reasoning:
            blocks.append(ThinkingBlock(thinking="".join(self._reasoning)))
        for parts in (self._text, self._refusal):
            if parts:
                blocks.append(TextBlock(text="".join(parts)))
        calls = [c for c in self._calls if c.name or c.arguments]
        for call in calls:
            call.id = call.id or self._ids.claim(call.server_id)
            blocks.append(_tool_use(call, self.finish_reason))
        return ResponseDone(
            message=Message(role="assistant", content=blocks),
            stop_reason=self._stop_reason(bool(calls)),
            usage=self._usage,
            model=self.model,
        )

    def _stop_reason(self, has_calls: bool) -> str:
        finish = self.finish_reason
        if finish in (None, "stop"):
            if has_calls:
                return "tool_use"
            if self._refusal:
                return "refusal"
        if finish is None:
            return "end_turn"
        return _FINISH.get(finish, finish)


def _tool_use(call: _Call, finish_reason: str | None) -> ToolUseBlock:
    raw = "".join(call.arguments)
    if not call.name:
        error = "The server sent a tool call without a name."
        return ToolUseBlock(id=call.id, name="", input={}, input_error=error)
    if not raw.strip():
        return ToolUseBlock(id=call.id, name=call.name, input={})
    why = " (the response hit the output limit)" if finish_reason == "length" else ""
    args, error = parse_tool_arguments(call.name, raw, why)
    return ToolUseBlock(id=call.id, name=call.name, input=args, input_error=error)


def fold_openai_chunks(chunks: Iterable[Any], taken_ids: Iterable[str] = ()) -> list[ModelEvent]:
    """Fold a whole recorded stream; the last event is the ``ResponseDone``."""
    return fold_all(OpenAIChunkFold(taken_ids), chunks)


# --- client -------------------------------------------------------------------


def _default_max_tokens_field(base_url: str | None) -> MaxTokensField:
    if base_url is None or httpx2.URL(base_url).host == "api.openai.com":
        return "max_completion_tokens"
    return "max_tokens"


def sdk_client(
    api_key: str | None, base_url: str | None, http_client: httpx2.AsyncClient | None
) -> openai.AsyncOpenAI:
    """The OpenAI SDK's client, retries left to MewCode's policy; without a key
    but with a ``base_url`` (a local server), a placeholder key is sent."""
    key = api_key
    if key is None and base_url is not None:
        key = _NO_KEY
    return openai.AsyncOpenAI(
        api_key=key, base_url=base_url, http_client=http_client, max_retries=0
    )


class OpenAIProvider(SdkProvider[openai.AsyncOpenAI]):
    """A model behind a Chat Completions endpoint (OpenAI or compatible).

    Without ``api_key`` and with a ``base_url`` (a local server), a placeholder
    key is sent. ``max_tokens_field`` defaults by host, see the module docstring.
    """

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
        max_tokens_field: MaxTokensField | None = None,
    ) -> None:
        super().__init__(name, model, api_key, base_url, max_tokens, http_client, retry)
        self._max_tokens_field = max_tokens_field or _default_max_tokens_field(base_url)

    def _new_client(self) -> openai.AsyncOpenAI:
        return sdk_client(self._api_key, self._base_url, self._http_client)

    def _prepare(self, request: ModelRequest) -> Callable[[], AsyncGenerator[ModelEvent, None]]:
        body = to_openai_request(
            request,
            request.model or self._model,
            request.max_tokens or self._max_tokens,
            max_tokens_field=self._max_tokens_field,
        )
        taken = tool_use_ids(request)
        return lambda: fold_sdk_stream(
            lambda: self._sdk().chat.completions.create(
                **body, stream=True, stream_options={"include_usage": True}
            ),
            OpenAIChunkFold(taken),
        )

    @staticmethod
    def _classify_sdk(exc: Exception) -> Failure | None:
        failure = classify_connection(
            exc,
            timeout=openai.APITimeoutError,
            connection=openai.APIConnectionError,
            validation=openai.APIResponseValidationError,
        )
        if failure is not None or not isinstance(exc, openai.APIError):
            return failure
        body = exc.body if isinstance(exc.body, Mapping) else {}
        message = _text(body.get("message")) or exc.message
        error_type = exc.type if isinstance(exc.type, str) else None
        if isinstance(exc, openai.APIStatusError):
            return status_failure(exc.status_code, error_type, message, exc.response.headers)
        # An error object inside a 200 stream (Groq `event: error`, OpenRouter `error` chunks).
        code = body.get("status_code")
        if code is None:
            code = body.get("code")
        return stream_error_failure(error_type, message, code)
