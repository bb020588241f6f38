"""Tool search: MCP tool definitions too large for the request are left out,
and the model finds the ones it needs with ``search_tools`` (``plan`` decides
what a request carries, ``search_tool`` is the tool and its ranking)."""

from __future__ import annotations

from .plan import deferrable, plan_tools
from .search_tool import SEARCH_TOOLS, rank_tools, search_tools

__all__ = ["SEARCH_TOOLS", "deferrable", "plan_tools", "rank_tools", "search_tools"]
