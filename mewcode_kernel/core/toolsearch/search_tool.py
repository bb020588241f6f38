"""``search_tools``: the tool the model gets in place of the MCP tool
definitions left out of the request (see ``plan``).

A query is keywords (``weather forecast``), or ``select:NAME[,NAME...]`` for
tools the model already knows by name. Matches are ranked by where the
words occur (the tool's own name first, then its server's, then its
description), and matches far weaker than the best are dropped; the definitions of the best ones are returned, and the agent
offers those tools from the next request on (``ToolServices.offer_tools``).
It reads only what the calling agent could be offered: the gate's tools,
never a tool the agent does not have.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Annotated

from pydantic import Field

from ..tools.base import tool
from ..tools.context import DescribedTool, RunContext

__all__ = ["SEARCH_TOOLS", "rank_tools", "search_tools"]

SEARCH_TOOLS = "search_tools"
MAX_RESULTS = 20
_MAX_TERMS = 32
_SELECT = "select:"
# Words too common to say which tool is meant.
_STOP_WORDS = frozenset(
    "a an and are as at be by for from in into is it of on or that the this to with".split()
)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _words(text: str) -> list[str]:
    """Lower-case words of ``text``: snake_case, kebab-case and camelCase split."""
    return [w.lower() for w in _WORD.findall(text)]


def _parts(name: str) -> tuple[str, str]:
    """``(server, tool)`` of ``mcp__server__tool`` (``("", name)`` otherwise)."""
    if name.startswith("mcp__"):
        server, sep, own = name[5:].partition("__")
        if sep:
            return server, own
    return "", name


def _score(terms: Sequence[str], query: str, candidate: DescribedTool) -> int:
    server, own = _parts(candidate.name)
    wanted = query.strip().lower()
    if wanted in (candidate.name.lower(), own.lower()):
        return 1_000
    own_words = set(_words(own))
    server_words = set(_words(server))
    description = candidate.description.lower()
    description_words = set(_words(candidate.description))
    score = 0
    for term in terms:
        if term in own_words:
            score += 10
        elif term in own.lower():
            score += 6
        if term in server_words:
            score += 4
        if term in description_words:
            score += 2
        elif len(term) > 2 and term in description:
            score += 1
    return score


def _selected(names: str, tools: Sequence[DescribedTool]) -> list[DescribedTool]:
    """``select:a,b``: tools named exactly (full name, or the server's own name)."""
    out: list[DescribedTool] = []
    for raw in names.split(","):
        wanted = raw.strip()
        if not wanted:
            continue
        for candidate in tools:
            if wanted in (candidate.name, _parts(candidate.name)[1]) and candidate not in out:
                out.append(candidate)
    return out


def rank_tools(query: str, tools: Iterable[DescribedTool], limit: int = 5) -> list[DescribedTool]:
    """The tools matching ``query``, best first (ties keep the given order)."""
    listed = list(tools)
    limit = max(1, min(limit, MAX_RESULTS))
    text = query.strip()
    if text.lower().startswith(_SELECT):
        return _selected(text[len(_SELECT) :], listed)[:limit]
    terms = [w for w in dict.fromkeys(_words(text)) if w not in _STOP_WORDS][:_MAX_TERMS]
    if not terms:
        return []
    scored = [(_score(terms, text, t), n, t) for n, t in enumerate(listed)]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    # a match far weaker than the best is noise: offering it costs the window
    floor = ranked[0][0] / 3 if ranked else 0
    return [t for score, _, t in ranked[:limit] if score >= floor]


def _definition(found: DescribedTool) -> str:
    return json.dumps(
        {
            "name": found.name,
            "description": found.description,
            "input_schema": found.input_schema,
        },
        ensure_ascii=False,
    )


def _servers(tools: Sequence[DescribedTool]) -> str:
    names = sorted({_parts(t.name)[0] for t in tools if _parts(t.name)[0]})
    return ", ".join(names) or "none"


@tool(
    name=SEARCH_TOOLS,
    read_only=True,
    kind="read",
    system=True,
    default_allow=True,
    background_ok=True,
    display_key="query",
)
async def search_tools(
    ctx: RunContext,
    query: Annotated[
        str,
        Field(
            description=(
                "Words to look for in tool names and descriptions (e.g. 'github issue'), "
                "or 'select:NAME,NAME' for tools you know by name."
            ),
            max_length=2_000,
        ),
    ],
    max_results: Annotated[
        int, Field(description="How many tools to return (1-20).", ge=1, le=MAX_RESULTS)
    ] = 5,
) -> str:
    """Find tools from the connected MCP servers. Their definitions are not
    listed up front because there are many; search for the ones the task
    needs. The matching tools' definitions are returned and the tools become
    callable by name from your next step on."""
    services = ctx.require_services()
    searchable = list(services.searchable_tools())
    if not searchable:
        return "Every tool is already offered to you; there is nothing to search."
    found = rank_tools(query, searchable, max_results)
    if not found:
        return (
            f"No tool matched {query.strip()[:200]!r}. {len(searchable)} tools can be "
            f"searched, from the MCP servers: {_servers(searchable)}. Try other words, "
            "or 'select:NAME' for a tool you know by name."
        )
    services.offer_tools([t.name for t in found])
    lines = [
        f"Found {len(found)} tool(s). They are offered to you from your next step on; "
        "call them by name. Their definitions:",
        *(_definition(t) for t in found),
    ]
    return "\n".join(lines)
