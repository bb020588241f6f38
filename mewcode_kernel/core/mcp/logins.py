"""The OAuth logins of a session's MCP servers: one ``ServerAuth`` per HTTP
server that uses OAuth, the login in progress (``/mcp login NAME``), and
logout (``/mcp logout NAME``). A login that succeeds connects its server
again at once and leaves a notice; its tools are offered from the next turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..config import McpServerConfig
from ..events import Notice
from ..redaction import Redactor
from .oauth_basics import DEFAULT_LOGIN_WAIT, LoginFailed, uses_oauth

if TYPE_CHECKING:
    from .oauth import ServerAuth
    from .oauth_login import Login

__all__ = ["DEFAULT_LOGIN_WAIT", "LoginFailed", "LoginStarted", "McpLogins", "uses_oauth"]

Reconnect = Callable[[str], Awaitable[str]]
"""Connect server ``name`` again; returns its state."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LoginStarted:
    """What ``/mcp login NAME`` shows: the link to open (``url``, empty when
    no person was needed), where the redirect is awaited, or what went wrong."""

    server: str
    url: str = ""
    redirect_uri: str = ""
    done: str | None = None
    error: str | None = None


class McpLogins:
    """See the module docstring. ``home``: the user's MewCode folder (tokens
    live under it); ``redactor``: the session's, told every token."""

    def __init__(self, *, reconnect: Reconnect, notify: Callable[[Notice], None]) -> None:
        self.home: Path | None = None
        self.redactor: Redactor = Redactor()
        self.login_wait = DEFAULT_LOGIN_WAIT
        self._reconnect = reconnect
        self._notify = notify
        self._auth: dict[str, ServerAuth] = {}
        self._after: set[asyncio.Task[None]] = set()

    def for_server(self, server: McpServerConfig, timeout: float) -> ServerAuth | None:
        """The OAuth of ``server`` (kept while its URL stays the same)."""
        if not uses_oauth(server):
            self._auth.pop(server.name, None)
            return None
        from .oauth import ServerAuth  # the SDK: loaded once there is a server to start

        known = self._auth.get(server.name)
        if known is None or known.url != server.url:
            known = self._auth[server.name] = ServerAuth(
                server, home=self.home, redactor=self.redactor, timeout=timeout
            )
        known.timeout = timeout
        return known

    def label(self, name: str) -> str | None:
        auth = self._auth.get(name)
        return auth.label() if auth is not None else None

    def auth_of(self, name: str) -> ServerAuth | None:
        return self._auth.get(name)

    async def login(self, name: str) -> LoginStarted:
        """Start the login of ``name`` (a running one is replaced) and wait
        until its link is known; ``KeyError`` if it does not use OAuth."""
        from .oauth_login import Login

        auth = self._auth[name]
        if auth.login is not None and not auth.login.finished:
            auth.login.cancel()
        login = Login(auth, wait=self.login_wait, on_done=self._done)
        auth.login = login
        await login.start()
        # discovery, registration: a few requests, each bounded by the timeout
        budget = auth.timeout * 6
        try:
            url = await asyncio.wait_for(asyncio.shield(login.link), budget)
        except LoginFailed as exc:
            return LoginStarted(server=name, error=str(exc))
        except TimeoutError:
            login.cancel()
            return LoginStarted(
                server=name,
                error=f"MCP server {name!r}: the authorization server did not answer within "
                f"{budget:g} s",
            )
        if not url:
            try:
                done = await asyncio.wait_for(asyncio.shield(login.result), budget)
            except (LoginFailed, TimeoutError) as exc:
                return LoginStarted(server=name, error=str(exc) or "timed out")
            return LoginStarted(server=name, done=done)
        return LoginStarted(server=name, url=url, redirect_uri=login.redirect_uri)

    def cancel(self, name: str) -> None:
        """Stop the login of ``name`` in progress, if any."""
        auth = self._auth.get(name)
        if auth is not None and auth.login is not None and not auth.login.finished:
            auth.login.cancel()

    def deliver(self, name: str, redirect_url: str) -> str | None:
        """The address the browser ended on, pasted back: ``None`` when the
        login in progress took it, else why not."""
        auth = self._auth[name]
        if auth.login is None or auth.login.finished:
            return f"no login of `{name}` is waiting; `/mcp login {name}` starts one"
        return auth.login.deliver(redirect_url)

    async def wait(self, name: str) -> str:
        """Wait for the login of ``name`` to end; its sentence (``LoginFailed``)."""
        auth = self._auth[name]
        if auth.login is None:
            raise LoginFailed(f"no login of {name!r} was started")
        return await asyncio.shield(auth.login.result)

    async def logout(self, name: str) -> str:
        auth = self._auth[name]
        if auth.login is not None and not auth.login.finished:
            auth.login.cancel()
        said = await auth.logout()
        await self._reconnect(name)
        return said

    async def aclose(self) -> None:
        for auth in self._auth.values():
            if auth.login is not None and not auth.login.finished:
                auth.login.cancel()
        for task in list(self._after):
            task.cancel()
        if self._after:
            await asyncio.gather(*self._after, return_exceptions=True)

    def _done(self, login: Login) -> None:
        error = login.result.exception()
        if error is not None:
            # the command said so already when the login failed before its link
            if login.link.done() and login.link.exception() is None:
                self._notify(Notice(level="warning", message=str(error)))
            return
        name = login.auth.name

        async def connect() -> None:
            state = await self._reconnect(name)
            level: Literal["info", "warning"] = "info" if state == "connected" else "warning"
            tail = (
                "its tools are offered from the next turn"
                if state == "connected"
                else f"it could not be connected ({state})"
            )
            self._notify(Notice(level=level, message=f"MCP server {name!r}: logged in; {tail}."))

        task = asyncio.create_task(connect(), name=f"mcp-login-connect:{name}")
        self._after.add(task)
        task.add_done_callback(self._after.discard)
