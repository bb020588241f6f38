"""Listing an MCP server's tools: every page of ``tools/list`` (bounded),
the listen stream that says the list changed (2026-07-28 connections), and
a key that tells whether a tool changed."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mcp import Client

__all__ = ["RELIST_PAGES", "list_tools", "listen_for_list_changes", "tool_key"]

RELIST_PAGES = 100


async def list_tools(client: Client) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(RELIST_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def listen_for_list_changes(client: Client, relist: asyncio.Event) -> None:
    """On a 2026-07-28 connection, list changes arrive on a listen stream."""
    with contextlib.suppress(Exception):
        async with client.listen(tools_list_changed=True) as sub:
            async for _ in sub:
                relist.set()


def tool_key(tool: Any) -> str:
    return tool.model_dump_json(by_alias=True, exclude_none=True)
