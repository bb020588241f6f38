"""What the OAuth modules share that needs no SDK (so the toolset can ask
whether a server uses OAuth before the SDK is loaded)."""

from __future__ import annotations

from ..config import McpServerConfig

__all__ = ["DEFAULT_LOGIN_WAIT", "LoginFailed", "uses_oauth"]

DEFAULT_LOGIN_WAIT = 600.0
"""Seconds a login waits for the person to authorize in the browser."""


class LoginFailed(Exception):
    """A login ended without tokens (the message says why)."""


def uses_oauth(server: McpServerConfig) -> bool:
    """An HTTP server whose entry does not bring its own ``Authorization``."""
    if server.type != "http" or server.url is None:
        return False
    return not any(k.strip().lower() == "authorization" for k in server.headers)
