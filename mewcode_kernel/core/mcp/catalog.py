"""A server's prompts and resources: listed when it connects (every page,
bounded) when it offers them, listed again when it says either list
changed (a ``list_changed`` notification, or the listen stream of a
2026-07-28 connection), and read back through ``read_text`` with a cap on
the size that reaches the conversation."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from dataclasses import dataclass, field
from typing import Any

from mcp import Client

__all__ = [
    "MAX_RESOURCE_CHARS",
    "Catalog",
    "ResourceTooLarge",
    "list_catalog",
    "listen_for_catalog_changes",
    "resource_parts",
]

MAX_RESOURCE_CHARS = 1_000_000
"""The most of one resource (text, or base64 of a blob) MewCode takes into a turn."""

_PAGES = 20  # pages of a list; a server that pages forever is cut there


class ResourceTooLarge(Exception):
    """A resource larger than ``MAX_RESOURCE_CHARS`` (the message says how large)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Catalog:
    """What a server offers besides tools (SDK ``Prompt``, ``Resource`` and
    ``ResourceTemplate`` objects)."""

    prompts: list[Any] = field(default_factory=list)
    resources: list[Any] = field(default_factory=list)
    templates: list[Any] = field(default_factory=list)

    def key(self) -> tuple[str, ...]:
        return tuple(
            item.model_dump_json(by_alias=True, exclude_none=True)
            for item in (*self.prompts, *self.resources, *self.templates)
        )


async def _pages(fetch: Any, attr: str) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(_PAGES):
        page = await fetch(cursor=cursor, cache_mode="refresh")
        items += getattr(page, attr)
        cursor = page.next_cursor
        if not cursor:
            break
    return items


async def list_catalog(client: Client) -> Catalog:
    """The server's prompts and resources (empty for what it does not offer,
    or what it fails to list: its tools still work)."""
    caps = client.server_capabilities
    prompts: list[Any] = []
    resources: list[Any] = []
    templates: list[Any] = []
    if caps.prompts is not None:
        with contextlib.suppress(Exception):
            prompts = await _pages(client.list_prompts, "prompts")
    if caps.resources is not None:
        with contextlib.suppress(Exception):
            resources = await _pages(client.list_resources, "resources")
        with contextlib.suppress(Exception):
            templates = await _pages(client.list_resource_templates, "resource_templates")
    return Catalog(prompts=prompts, resources=resources, templates=templates)


async def listen_for_catalog_changes(client: Client, relist: asyncio.Event) -> None:
    """On a 2026-07-28 connection, list changes arrive on a listen stream."""
    with contextlib.suppress(Exception):
        async with client.listen(prompts_list_changed=True, resources_list_changed=True) as sub:
            async for _ in sub:
                relist.set()


def resource_parts(uri: str, contents: list[Any]) -> list[tuple[str, str, str]]:
    """A read resource's contents as ``(uri, mime type, text)``; a blob is
    decoded when it is text, else named. ``ResourceTooLarge`` past the cap,
    counted over all parts before any is decoded."""
    size = sum(len(getattr(c, "text", None) or getattr(c, "blob", None) or "") for c in contents)
    if size > MAX_RESOURCE_CHARS:
        raise ResourceTooLarge(
            f"resource {uri} is {size / 1_000_000:.1f} MB; MewCode takes at most "
            f"{MAX_RESOURCE_CHARS / 1_000_000:g} MB of a resource into a conversation. "
            "Ask the server for a smaller part, or use a tool of the server that searches it."
        )
    parts: list[tuple[str, str, str]] = []
    for c in contents:
        where = str(getattr(c, "uri", "") or uri)
        mime = str(getattr(c, "mime_type", None) or "")
        text = getattr(c, "text", None)
        if text is None:
            blob = getattr(c, "blob", None) or ""
            try:
                text = base64.b64decode(blob, validate=True).decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                text = f"[binary content, {len(blob) * 3 // 4} bytes, {mime or 'unknown type'}]"
        parts.append((where, mime, text))
    return parts
