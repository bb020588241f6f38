"""How an MCP server's failures are read: whether an SDK error means the
connection is gone (rather than the server refusing one call), and one line
saying what went wrong, through the SDK's task-group exception groups."""

from __future__ import annotations

import httpx2
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, INTERNAL_ERROR, INVALID_REQUEST

__all__ = ["ServerLost", "describe_failure", "is_lost", "root_cause"]


class ServerLost(Exception):
    """The server went away during a call (``reason`` says how)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def is_lost(exc: MCPError, *, http: bool) -> bool:
    """Whether ``exc`` means the connection is gone (rather than the server
    refusing this one call)."""
    if exc.code == CONNECTION_CLOSED and exc.message == "Connection closed":  # the SDK's own
        return True
    if not http:
        return False
    # The server no longer knows our session (it restarted, or expired it): the
    # SDK reports a 404 as "Session terminated"; servers answering 400 say so in
    # their own words, or with a body the SDK cannot read as JSON-RPC.
    message = exc.message.lower()
    if exc.code == INVALID_REQUEST and message == "session terminated":
        return True
    if exc.code == INTERNAL_ERROR and message == "server returned an error response":
        return True
    return "not initialized" in message or (
        "session" in message and any(w in message for w in _LOST_SESSION_WORDS)
    )


_LOST_SESSION_WORDS = ("no valid", "invalid", "unknown", "not found", "expired")


def root_cause(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_failure(exc: BaseException) -> str:
    """One line for a failure, unwrapping the SDK's task-group exception groups."""
    exc = root_cause(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, PermissionError):
        return f"cannot run the command: {exc.strerror or exc}"
    if isinstance(exc, MCPError):
        if exc.code == CONNECTION_CLOSED and exc.message == "Connection closed":
            return "the server closed the connection"
        if exc.code == INTERNAL_ERROR and exc.message == "Server returned an error response":
            return "the server answered with an HTTP error (its session may have ended)"
        return f"{exc.message} (error {exc.code})"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if isinstance(exc, httpx2.HTTPError):
        return f"{type(exc).__name__}: {exc}"
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
