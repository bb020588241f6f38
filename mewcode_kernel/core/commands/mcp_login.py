"""``/mcp login NAME [URL]`` and ``/mcp logout NAME``: OAuth for an MCP
server over HTTP.

``/mcp login NAME`` returns as soon as the authorization link is known: the
result is the login card (``meta["card"] == "mcp_login"``: the link, where
the redirect is awaited) and the login goes on waiting for the browser's
redirect to the loopback port; ``/mcp login NAME URL`` hands it the address
the browser ended on instead. When the login succeeds the server connects
again and a notice says so before the next turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from .registry import CommandResult

if TYPE_CHECKING:
    from ..mcp import McpToolset

__all__ = ["card_link", "login_command", "logout_command"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def card_link(url: str) -> str | None:
    """``url`` as a link the card can show, or ``None`` when the person must
    not be sent there: only https (or http to this machine), and every
    character that could end a Markdown link or start markup percent-encoded
    (the authorization server wrote this address)."""
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in _LOOPBACK):
        return quote(url, safe=":/?&=%#+,;@~!$*'-._")
    return None


def _fail(message: str) -> CommandResult:
    return CommandResult(markdown=message, error=True)


def _not_oauth(mcp: McpToolset, name: str) -> CommandResult | None:
    known = {s.name: s for s in mcp.statuses()}
    if name not in known:
        names = ", ".join(f"`{n}`" for n in known)
        return _fail(f"There is no MCP server named `{name}`. Configured: {names}.")
    if mcp.logins.auth_of(name) is None:
        status = known[name]
        if status.transport == "stdio":
            why = "it runs on this machine (stdio)"
        elif status.state == "untrusted":
            why = "it was not started (the project is not trusted)"
        else:
            why = "its entry sends its own `Authorization` header"
        return _fail(f"`{name}` does not use OAuth: {why}.")
    return None


async def login_command(mcp: McpToolset, name: str, pasted: str | None) -> CommandResult:
    refused = _not_oauth(mcp, name)
    if refused is not None:
        return refused
    if pasted is not None:
        problem = mcp.logins.deliver(name, pasted)
        if problem is not None:
            return _fail(f"That address was not used for `{name}`: {problem}.")
        return CommandResult(
            markdown=f"Got it: MewCode finishes the login of `{name}` and connects it.",
            meta={"card": "mcp_login", "server": name, "state": "received"},
        )
    started = await mcp.logins.login(name)
    if started.error is not None:
        return _fail(started.error)
    if started.done is not None:
        return CommandResult(
            markdown=f"`{name}` needed no login: {started.done}",
            meta={"card": "mcp_login", "server": name, "state": "done"},
        )
    listening = started.redirect_uri
    link = card_link(started.url)
    if link is None:
        mcp.logins.cancel(name)
        return _fail(
            f"`{name}`: the authorization server's login page is not an https address, so "
            "MewCode does not send you there."
        )
    return CommandResult(
        markdown=(
            f"**Log in to MCP server `{name}`**: open [this authorization link]({link}) "
            f"and approve MewCode.\n\nMewCode waits for the browser to come back to "
            f"`{listening}`. If this kernel runs on another machine, the browser ends on a page "
            f"that does not load: copy that page's address and run "
            f"`/mcp login {name} <address>`."
        ),
        data={"server": name, "url": link, "redirect_uri": listening},
        meta={"card": "mcp_login", "server": name, "url": link, "state": "waiting"},
    )


async def logout_command(mcp: McpToolset, name: str) -> CommandResult:
    refused = _not_oauth(mcp, name)
    if refused is not None:
        return refused
    said = await mcp.logins.logout(name)
    return CommandResult(
        markdown=f"Logged out of `{name}`: {said}. `/mcp login {name}` logs in again.",
        data={"server": name, "result": said},
    )
