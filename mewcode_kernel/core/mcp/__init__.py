"""MCP servers as tools, on the official ``mcp`` SDK (the only package of the
core that imports it, and only when a server is started).

* ``launch``: how a stdio server's process is built (command, arguments, an
  allowlisted environment without provider keys, its log file): the one
  place an OS sandbox wraps.
* ``transport``: the SDK's stdio and streamable-HTTP transports, watched for
  loss.
* ``connection``: one server: connect within a budget, list and call tools
  with a timeout, restart after a loss.
* ``tool_listing``: every page of a server's tool list, and the stream that
  says it changed.
* ``failures``: whether an SDK error means the server is gone, and one line
  saying what went wrong.
* ``adapt``: MCP tools as ``Tool``s (``mcp__<server>__<tool>``) and results
  as ``ToolOutput``s (text, images, embedded resources).
* ``toolset``: ``McpToolset``, all of a session's servers as one ``Toolset``.
* ``oauth``, ``oauth_login``, ``oauth_store``, ``logins``: OAuth for HTTP
  servers (the SDK's client auth; ``/mcp login``, tokens ``0600`` under
  ``MEWCODE_HOME``, refresh, revocation).
* ``catalog``, ``offerings``: prompts and resources (``/mcp__s__p``,
  ``@server:uri``, ``read_mcp_resource``, ``list_changed``, the size cap).
* ``elicitation``: a server's request for input, as a form or declined.
"""

from __future__ import annotations

from .launch import DEFAULT_ENV_ALLOWLIST, NEVER_INHERITED, StdioLaunch, log_path, stdio_launch
from .toolset import (
    CLOSE_DEADLINE,
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_CONNECT_TIMEOUT,
    TRUST_ENV,
    McpToolset,
    ServerStatus,
)

__all__ = [
    "CLOSE_DEADLINE",
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_ENV_ALLOWLIST",
    "NEVER_INHERITED",
    "TRUST_ENV",
    "McpToolset",
    "ServerStatus",
    "StdioLaunch",
    "log_path",
    "stdio_launch",
]
