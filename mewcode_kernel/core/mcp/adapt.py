"""From MCP to MewCode: a server's tool listing becomes ``Tool``s, a tool
result becomes a ``ToolOutput``.

Tools are named ``mcp__<server>__<tool>``; a name outside
``[A-Za-z0-9_-]``, or longer than the 64 characters providers accept, is
reported and skipped. An empty description becomes "tool <t> from MCP
server <s>", an empty schema ``{"type": "object"}``. A tool is read-only
only when the server annotates it ``readOnlyHint: true``.

Every kind of content reaches the model, never dropped silently: text as
text; images as image parts (a text note where the provider cannot take
them, or the image is not one a model reads); embedded text resources as
text, image blobs as images, other blobs, audio and resource links as a
text note that says what was there. The SDK's result objects are read by
their fields (``type``, ``text``, ...), so this module imports no SDK.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from ..messages import ImageBlock, ImageSource, TextBlock
from ..tools.base import Tool, ToolOutput
from ..tools.context import RunContext

__all__ = [
    "MAX_IMAGE_BYTES",
    "MODEL_IMAGE_TYPES",
    "CallRemote",
    "adapt_tool",
    "full_name",
    "to_output",
]

MODEL_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Image types a model reads; others become a text note."""

MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Larger images are refused by providers (and would fail the whole request)."""

_VALID_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

CallRemote = Callable[[RunContext, dict[str, Any], bool], Awaitable[ToolOutput]]
"""Runs a call on the server: ``(ctx, arguments, read_only)``."""


def full_name(server: str, tool: str) -> str:
    return f"mcp__{server}__{tool}"


def adapt_tool(server: str, info: Any, call: CallRemote) -> Tool | str:
    """``info`` (an SDK ``Tool``) as a MewCode ``Tool`` calling ``call``; or,
    when the name cannot be offered, the reason (one sentence)."""
    remote = str(info.name)
    name = full_name(server, remote)
    if not _VALID_NAME.match(name):
        why = (
            "is longer than the 64 characters providers accept"
            if len(name) > 64
            else "has characters outside [A-Za-z0-9_-]"
        )
        return f"MCP server {server!r}: tool {remote!r} was skipped: its name {name!r} {why}."
    annotations = _annotations(info)
    read_only = annotations.get("readOnlyHint") is True
    schema = _schema(getattr(info, "input_schema", None))

    async def run(ctx: RunContext, args: dict[str, Any]) -> ToolOutput:
        return await call(ctx, args, read_only)

    return Tool(
        name=name,
        description=(info.description or "").strip() or f"tool {remote} from MCP server {server}",
        input_schema=schema,
        read_only=read_only,
        kind="read" if read_only else "exec",
        run=run,
        family="mcp",
        display_key=_display_key(schema),
        background_ok=True,
        annotations=annotations,
    )


def _annotations(info: Any) -> dict[str, Any]:
    raw = getattr(info, "annotations", None)
    if raw is None:
        return {}
    if hasattr(raw, "model_dump"):
        return dict(raw.model_dump(by_alias=True, exclude_none=True, mode="json"))
    return dict(raw) if isinstance(raw, dict) else {}


def _schema(raw: Any) -> dict[str, Any]:
    schema = dict(raw) if isinstance(raw, dict) else {}
    if not schema:
        return {"type": "object"}
    schema.setdefault("type", "object")
    return schema


def _display_key(schema: dict[str, Any]) -> str | None:
    """The first required string argument: what a row shows for a call."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return None
    for key in schema.get("required") or list(props):
        prop = props.get(key)
        if isinstance(prop, dict) and prop.get("type") == "string":
            return str(key)
    return None


# --- results -------------------------------------------------------------------------


def to_output(result: Any, *, source: str) -> ToolOutput:
    """A ``CallToolResult`` as a ``ToolOutput``. ``source`` (``server/tool``)
    is noted on images and on what cannot be shown."""
    parts: list[TextBlock | ImageBlock] = []
    for block in getattr(result, "content", None) or []:
        parts += _block(block, source)
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(isinstance(p, TextBlock) and p.text for p in parts):
        parts.append(TextBlock(text=json.dumps(structured, ensure_ascii=False, indent=2)))
    return ToolOutput(content=parts, is_error=bool(getattr(result, "is_error", False)))


def _block(block: Any, source: str) -> list[TextBlock | ImageBlock]:
    kind = getattr(block, "type", None)
    if kind == "text":
        return [TextBlock(text=str(block.text))]
    if kind == "image":
        return [_image(str(block.data), str(block.mime_type or ""), source)]
    if kind == "audio":
        size = _size(str(block.data))
        return [
            TextBlock(
                text=f"[audio: {block.mime_type}, {size:,} bytes from {source}; not shown: audio is not passed to the model]"
            )
        ]
    if kind == "resource_link":
        what = f"[resource link: {block.name} <{block.uri}>"
        if getattr(block, "mime_type", None):
            what += f", {block.mime_type}"
        if getattr(block, "description", None):
            what += f": {block.description}"
        return [TextBlock(text=what + "]")]
    if kind == "resource":
        return [_resource(block.resource, source)]
    return [
        TextBlock(
            text=f"[{kind or 'unknown'} content from {source}; not shown: MewCode does not read this kind]"
        )
    ]


def _resource(resource: Any, source: str) -> TextBlock | ImageBlock:
    uri = str(getattr(resource, "uri", ""))
    mime = str(getattr(resource, "mime_type", None) or "")
    text = getattr(resource, "text", None)
    if text is not None:
        head = f"[resource {uri}" + (f" ({mime})" if mime else "") + "]"
        return TextBlock(text=f"{head}\n{text}")
    blob = str(getattr(resource, "blob", "") or "")
    if mime.startswith("image/"):
        return _image(blob, mime, f"{source} ({uri})")
    size = _size(blob)
    return TextBlock(
        text=f"[resource {uri}: {mime or 'binary data'}, {size:,} bytes from {source}; not shown: binary content is not passed to the model]"
    )


def _image(data: str, mime: str, source: str) -> TextBlock | ImageBlock:
    data = "".join(data.split())  # some servers wrap base64 in lines
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return TextBlock(
            text=f"[image from {source}: the server sent data that is not valid base64; not shown]"
        )
    if mime not in MODEL_IMAGE_TYPES:
        return TextBlock(
            text=f"[image: {mime or 'unknown type'}, {len(raw):,} bytes from {source}; not shown: models read PNG, JPEG, GIF and WebP only]"
        )
    if len(raw) > MAX_IMAGE_BYTES:
        return TextBlock(
            text=f"[image: {mime}, {len(raw):,} bytes from {source}; not shown: larger than the {MAX_IMAGE_BYTES // 2**20} MB a model accepts]"
        )
    return ImageBlock(source=ImageSource(media_type=mime, data=data), note=source)


def _size(data: str) -> int:
    try:
        return len(base64.b64decode("".join(data.split()), validate=True))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4
