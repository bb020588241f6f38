"""OAuth 2.1 for a streamable-HTTP MCP server, on the SDK's client auth
(``mcp.client.auth``: discovery, dynamic client registration, PKCE, refresh).

A server gets a ``ServerAuth`` unless its entry sends its own
``Authorization`` header. Connecting never asks a person anything: with
stored tokens the SDK sends them and refreshes an expired one by itself;
without tokens, or when the refresh token is refused, the connection fails
with ``needs_login`` set, and ``/mcp login NAME`` runs the interactive
flow (``oauth_login.Login``): the link shown as a card, the redirect taken
on a 127.0.0.1 port or pasted back. ``/mcp logout NAME`` revokes the tokens
at the authorization server (when it offers revocation) and forgets them.

Every request to the authorization server is bounded by ``timeout`` (the
server's ``connect_timeout``); only the wait for the person is longer.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
)
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata, OAuthMetadata

from ..config import McpServerConfig
from ..redaction import Redactor
from .oauth_store import OAuthStore

__all__ = ["CALLBACK_PATH", "LoginRequired", "ServerAuth", "bounded_transport"]

# The SDK logs a whole failed flow with its traceback ("OAuth flow error"):
# our own message says what went wrong, once, with secrets taken out.
logging.getLogger("mcp.client.auth").addHandler(logging.NullHandler())

CALLBACK_PATH = "/callback"
_CLIENT_NAME = "MewCode"

AuthLabel = Literal["none", "logged in", "expired", "not logged in", "waiting for login"]


class _Bounded(httpx2.AsyncBaseTransport):
    """A transport that gives every request without a timeout one. The SDK
    builds its OAuth requests (discovery, registration, token, refresh) as
    bare ``Request``s, which a client sends with no timeout at all: an
    authorization server that never answers would hold the flow forever."""

    def __init__(self, timeout: float) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._timeout = httpx2.Timeout(timeout).as_dict()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.extensions.setdefault("timeout", self._timeout)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def bounded_transport(timeout: float) -> httpx2.AsyncBaseTransport:
    """See ``_Bounded``."""
    return _Bounded(timeout)


class LoginRequired(Exception):
    """The server needs a person to authorize MewCode (``/mcp login NAME``)."""


class _Provider(OAuthClientProvider):
    """The SDK's provider, given what it only knows within one process: when
    a stored token expires (so it refreshes instead of sending it) and the
    authorization server's metadata (so the refresh goes to its token
    endpoint, not to the MCP server's origin)."""

    def __init__(self, store: OAuthStore, **kwargs: Any) -> None:
        super().__init__(storage=store, **kwargs)
        self._store = store

    async def _initialize(self) -> None:
        await super()._initialize()
        tokens = self.context.current_tokens
        if tokens is not None and tokens.expires_in is not None:
            self.context.update_token_expiry(tokens)
        known = self._store.server_metadata()
        if self.context.oauth_metadata is None and known is not None:
            try:
                self.context.oauth_metadata = OAuthMetadata.model_validate(known)
            except ValueError:
                pass

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        if self.context.oauth_metadata is not None:
            self._store.keep_server_metadata(
                self.context.oauth_metadata.model_dump(mode="json", exclude_none=True)
            )


class _Challenged(httpx2.Auth):
    """Without tokens: send the request as it is, and remember a 401 (the
    server wants OAuth) without registering anywhere or asking anyone."""

    def __init__(self, auth: ServerAuth) -> None:
        self._auth = auth

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        response = yield request
        if response.status_code == 401:
            self._auth.needs_login = True


class ServerAuth:
    """One server's OAuth: its token store, the ``httpx`` auth its
    connection uses, its login in progress and its state for ``/mcp``."""

    def __init__(
        self,
        server: McpServerConfig,
        *,
        home: Path | None,
        redactor: Redactor,
        timeout: float,
    ) -> None:
        assert server.url is not None
        self.name = server.name
        self.url = server.url
        self.timeout = timeout
        self.redactor = redactor
        self.store = OAuthStore(home, server.name, server.url, redactor.add)
        self.store.known_secrets()
        #: the last connection found that a person must authorize (again)
        self.needs_login = False
        #: why the last login or refresh failed, for ``/mcp``
        self.problem: str | None = None
        self.login: Any = None  # the ``oauth_login.Login`` in progress, if any

    def label(self) -> AuthLabel:
        if self.login is not None and not self.login.finished:
            return "waiting for login"
        state = self.store.state()
        if state == "none":
            return "not logged in"
        if self.needs_login:
            return "expired"
        return "logged in" if state in ("valid", "refreshable") else "expired"

    def for_connect(self) -> httpx2.Auth:
        """The auth a connection sends with: stored tokens (refreshed by the
        SDK when expired), or none until a login stored some."""
        self.needs_login = False
        if self.store.state() == "none":
            return _Challenged(self)

        async def refuse(_url: str) -> None:
            self.needs_login = True
            raise LoginRequired(f"MCP server {self.name!r} needs you to log in again")

        async def never() -> AuthorizationCodeResult:
            raise LoginRequired(f"MCP server {self.name!r} needs you to log in again")

        return self.provider(self.store.redirect_port() or 0, refuse, never)

    def provider(
        self,
        port: int,
        on_redirect: Callable[[str], Awaitable[None]],
        on_callback: Callable[[], Awaitable[AuthorizationCodeResult]],
    ) -> OAuthClientProvider:
        metadata = OAuthClientMetadata(
            client_name=_CLIENT_NAME,
            redirect_uris=[f"http://127.0.0.1:{port}{CALLBACK_PATH}"],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        )
        return _Provider(
            self.store,
            server_url=self.url,
            client_metadata=metadata,
            redirect_handler=on_redirect,
            callback_handler=on_callback,
        )

    def http_client(self, auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
        """A client for the authorization server: every request bounded."""
        return httpx2.AsyncClient(
            auth=auth, timeout=self.timeout, transport=bounded_transport(self.timeout)
        )

    def describe(self, exc: BaseException) -> str:
        """One line for a failed flow, with any secret taken out."""
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        if isinstance(exc, httpx2.TimeoutException):
            text = (
                f"the authorization server did not answer within {self.timeout:g} s "
                f"({type(exc).__name__})"
            )
        elif isinstance(exc, httpx2.HTTPError):
            text = f"the authorization server could not be reached: {type(exc).__name__}: {exc}"
        elif isinstance(exc, TimeoutError):
            text = "timed out"
        else:
            text = str(exc) or type(exc).__name__
        return self.redactor.redact(" ".join(text.split())[:500])

    async def logout(self) -> str:
        """Revoke the tokens where the authorization server offers it, and
        forget them; returns what happened, in a sentence."""
        tokens = self.store.forget_tokens()
        self.needs_login = False
        if not tokens:
            return "there were no tokens to forget"
        client = await self.store.get_client_info()
        try:
            endpoint = await self._revocation_endpoint()
        except (httpx2.HTTPError, ValueError) as exc:
            return f"tokens forgotten; the authorization server was not told ({self.describe(exc)})"
        if endpoint is None or client is None:
            return "tokens forgotten (the authorization server offers no revocation)"
        failed: list[str] = []
        async with self.http_client() as http:
            for hint in ("refresh_token", "access_token"):
                token = tokens.get(hint)
                if not token:
                    continue
                data = {"token": token, "token_type_hint": hint, "client_id": client.client_id}
                if client.client_secret:
                    data["client_secret"] = client.client_secret
                try:
                    response = await http.post(endpoint, data=data)
                except httpx2.HTTPError as exc:
                    failed.append(self.describe(exc))
                    continue
                if response.status_code >= 400:
                    failed.append(f"HTTP {response.status_code}")
        if failed:
            return f"tokens forgotten; revocation failed ({'; '.join(failed)})"
        return "tokens revoked at the authorization server and forgotten"

    async def _revocation_endpoint(self) -> str | None:
        """Discovery as the SDK does it: the resource's metadata names the
        authorization server, whose metadata names its revocation endpoint."""
        async with self.http_client() as http:
            auth_server: str | None = None
            for url in build_protected_resource_metadata_discovery_urls(None, self.url):
                response = await http.get(url)
                if response.status_code == 200:
                    servers = response.json().get("authorization_servers") or []
                    auth_server = str(servers[0]) if servers else None
                    break
            for url in build_oauth_authorization_server_metadata_discovery_urls(
                auth_server, self.url
            ):
                response = await http.get(url)
                if response.status_code == 200:
                    meta = OAuthMetadata.model_validate_json(response.content)
                    return str(meta.revocation_endpoint) if meta.revocation_endpoint else None
        return None
