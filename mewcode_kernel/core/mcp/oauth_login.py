"""One interactive OAuth login (``/mcp login NAME``).

It runs in a task of its own, so the command returns as soon as the
authorization link is known (the card shows it) while the login waits for
the person: the browser's redirect to ``http://127.0.0.1:PORT/callback``
(a listener on the loopback interface only), or the address it ended on
pasted back (``/mcp login NAME <url>``, for a kernel on another machine).

Only a redirect carrying the ``state`` of this very login is taken; any
other request to the port (another page, a forged callback) is answered
400 and ignored, so it can neither end the login nor feed it a code. The
SDK then checks the state again, exchanges the code with its PKCE verifier
and stores the tokens. Requests to the authorization server are bounded by
the server's timeout; the wait for the person by ``wait``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

from .oauth import CALLBACK_PATH, ServerAuth
from .oauth_basics import DEFAULT_LOGIN_WAIT, LoginFailed

__all__ = ["Login"]

_HEAD_LIMIT = 16384  # bytes of a request head the listener reads
_HEAD_TIMEOUT = 5.0  # seconds a connection to the listener has to send its head

_DONE_PAGE = (
    "<!doctype html><meta charset=utf-8><title>MewCode</title>"
    "<p>{message}</p><p>You can close this tab and go back to the notebook.</p>"
)


class Login:
    """See the module docstring. ``link`` resolves to the authorization URL
    (``""`` when no person was needed; fails when the flow failed first);
    ``result`` to a sentence on success, or fails with ``LoginFailed``."""

    def __init__(
        self,
        auth: ServerAuth,
        *,
        wait: float = DEFAULT_LOGIN_WAIT,
        on_done: Callable[[Login], None] | None = None,
    ) -> None:
        self.auth = auth
        self.wait = wait
        self.redirect_uri = ""
        self.link: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.result: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._code: asyncio.Future[AuthorizationCodeResult] = (
            asyncio.get_running_loop().create_future()
        )
        self._state: str | None = None
        self._listener: asyncio.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._on_done = on_done

    @property
    def finished(self) -> bool:
        return self.result.done()

    async def start(self) -> None:
        """Open the loopback listener (the port of an earlier registration
        when it is free) and start the flow."""
        port = self.auth.store.redirect_port() or 0
        try:
            self._listener = await asyncio.start_server(self._serve, "127.0.0.1", port)
        except OSError:
            # taken: the redirect cannot arrive here; pasting it back still works
            self._listener = None
        if self._listener is not None:
            port = self._listener.sockets[0].getsockname()[1]
        self.redirect_uri = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
        self._task = asyncio.create_task(self._run(port), name=f"mcp-login:{self.auth.name}")

    def deliver(self, redirect_url: str) -> str | None:
        """Take the address the browser was sent to (pasted back); ``None``
        when taken, else why not."""
        query = urlsplit(redirect_url.strip()).query
        if not query:
            return "that is not the address the browser ended on (it has no `?code=...&state=...`)"
        return self._take(parse_qs(query))

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    # --- the flow -----------------------------------------------------------------

    async def _run(self, port: int) -> None:
        provider = self.auth.provider(port, self._on_redirect, self._on_callback)
        body = (
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
            b'"2025-06-18","capabilities":{},"clientInfo":{"name":"mewcode","version":"0"}}}'
        )
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2025-06-18",
        }
        try:
            async with self.auth.http_client(provider) as http:
                async with http.stream("POST", self.auth.url, content=body, headers=headers) as r:
                    status = r.status_code
            if status in (401, 403):
                raise RuntimeError(
                    f"the server still refused MewCode after the login (HTTP {status})"
                )
            if await self.auth.store.get_tokens() is None:
                raise RuntimeError("the server did not ask for a login and gave no tokens")
            self.auth.needs_login = False
            self.auth.problem = None
            self._finish(ok=f"MCP server {self.auth.name!r}: logged in.")
        except asyncio.CancelledError:
            self._finish(error="the login was cancelled")
            raise
        except Exception as exc:  # every failure becomes the login's message
            self._finish(error=self.auth.describe(exc))
        finally:
            if self._listener is not None:
                self._listener.close()

    def _finish(self, *, ok: str | None = None, error: str | None = None) -> None:
        if error is not None:
            self.auth.problem = error
            failure = LoginFailed(f"MCP server {self.auth.name!r}: the login failed: {error}")
            for future in (self.link, self.result):
                if not future.done():
                    future.set_exception(failure)
                    future.exception()  # read by whoever waits; never "not retrieved"
        else:
            if not self.link.done():  # no person was needed (the tokens still held)
                self.link.set_result("")
            if not self.result.done():
                self.result.set_result(ok or "logged in")
        if self._on_done is not None:
            self._on_done(self)

    async def _on_redirect(self, url: str) -> None:
        states = parse_qs(urlsplit(url).query).get("state") or []
        self._state = states[0] if states else None
        if not self.link.done():
            self.link.set_result(url)

    async def _on_callback(self) -> AuthorizationCodeResult:
        try:
            return await asyncio.wait_for(asyncio.shield(self._code), self.wait)
        except TimeoutError:
            raise LoginFailed(
                f"nobody completed the authorization within {self.wait:g} s; "
                f"`/mcp login {self.auth.name}` starts again"
            ) from None

    def _take(self, params: dict[str, list[str]]) -> str | None:
        state = (params.get("state") or [""])[0]
        if self._state is None or not hmac.compare_digest(state.encode(), self._state.encode()):
            return "it is not the answer to this login (its `state` does not match)"
        if self._code.done():
            return "this login already has its answer"
        error = (params.get("error") or [""])[0]
        if error:
            why = (params.get("error_description") or [""])[0]
            text = f"the authorization server refused: {error}" + (f" ({why})" if why else "")
            self._code.set_exception(LoginFailed(text[:300]))
            return None
        code = (params.get("code") or [""])[0]
        if not code:
            return "it carries no authorization code"
        iss = (params.get("iss") or [None])[0]
        self._code.set_result(AuthorizationCodeResult(code=code, state=state, iss=iss))
        return None

    # --- the loopback listener ----------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            writer.close()
            return
        line = head[:_HEAD_LIMIT].split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        target = urlsplit(parts[1]) if len(parts) == 3 and parts[0] == "GET" else None
        if target is None or target.path != CALLBACK_PATH:
            status, message = "404 Not Found", "Nothing here."
        else:
            problem = self._take(parse_qs(target.query))
            if problem is None:
                status, message = "200 OK", "MewCode received the authorization."
            else:
                status, message = "400 Bad Request", f"MewCode ignored this request: {problem}."
        page = _DONE_PAGE.format(message=message).encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(page)}\r\nConnection: close\r\n\r\n".encode()
            + page
        )
        with contextlib.suppress(OSError):
            await writer.drain()
        writer.close()
