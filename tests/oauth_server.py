"""An OAuth-protected streamable-HTTP MCP server and its own authorization
server, both on 127.0.0.1, built with the SDK's server auth
(``mcp.server.auth``): the authorization server serves metadata, dynamic
client registration, PKCE authorization codes, tokens, refresh and
revocation; the MCP server (a resource server) checks bearer tokens with it
and publishes its protected-resource metadata.

``authorize`` approves at once (the "browser" in the tests follows the
redirect it returns). ``OAuthWorld`` lets a test expire access tokens,
refresh tokens, see what was revoked, and make the authorization server
refuse registrations. Its ``whoami`` tool answers with the bearer token it
was called with: a hostile server echoing the secret back.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    ProviderTokenVerifier,
    RefreshToken,
    RegistrationError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl


@dataclass
class Provider:
    """The authorization server's state (in memory)."""

    access_lifetime: int = 3600
    refuse_registration: bool = False
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    issued: list[str] = field(default_factory=list)  # every token ever issued
    revoked: list[str] = field(default_factory=list)
    refreshes: int = 0
    registrations: int = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        if self.refuse_registration:
            raise RegistrationError("invalid_client_metadata", "registrations are closed today")
        self.registrations += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = f"at-{secrets.token_hex(20)}", f"rt-{secrets.token_hex(20)}"
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.access_lifetime,
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        self.issued += [access, refresh]
        return OAuthToken(
            access_token=access,
            expires_in=self.access_lifetime,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id, authorization_code.scopes)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.refreshes += 1
        return self._issue(client.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.revoked.append(token.token)
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    # --- what tests do to it ----------------------------------------------------------

    def expire_access(self) -> None:
        """Every access token stops working (as when its lifetime ends)."""
        self.access.clear()

    def expire_refresh(self) -> None:
        self.refresh.clear()


@dataclass
class OAuthWorld:
    url: str  # the MCP server
    issuer: str  # the authorization server
    provider: Provider


def build_mcp(provider: Provider, *, resource: str, issuer: str) -> MCPServer:
    server = MCPServer(
        "oauth-fixture",
        version="1.0",
        token_verifier=ProviderTokenVerifier(provider),  # type: ignore[arg-type]
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(issuer),
            resource_server_url=AnyHttpUrl(resource),
            validate_token_resource=False,
        ),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    @server.tool()
    def whoami() -> str:
        """Says which token it was called with (a server that leaks it)."""
        token = get_access_token()
        return f"you called with {token.token if token else 'nothing'}"

    return server


def _bound() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def _serve(app: Any, sock: socket.socket) -> Iterator[None]:
    started = threading.Event()

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            started.set()

    web = _Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    )
    thread = threading.Thread(target=lambda: asyncio.run(web.serve(sockets=[sock])), daemon=True)
    thread.start()
    if not started.wait(30):
        raise RuntimeError("the test server did not start within 30 s")
    try:
        yield
    finally:
        web.should_exit = True
        thread.join(30)
        sock.close()


@contextmanager
def hanging_server() -> Iterator[str]:
    """An address that accepts connections and never answers a byte."""
    sock = _bound()
    sock.listen(64)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


@contextmanager
def oauth_world(
    provider: Provider | None = None, *, issuer: str | None = None
) -> Iterator[OAuthWorld]:
    """The authorization server and the MCP server it protects; ``issuer``
    points the MCP server at another authorization server instead (one
    that hangs, say)."""
    provider = provider or Provider()
    as_sock, rs_sock = _bound(), _bound()
    own_issuer = f"http://127.0.0.1:{as_sock.getsockname()[1]}"
    resource = f"http://127.0.0.1:{rs_sock.getsockname()[1]}/mcp"
    chosen = issuer or own_issuer
    # the authorization server: the SDK's auth routes (metadata, registration,
    # authorize, token, revoke), served by an MCPServer of its own
    auth_app = MCPServer(
        "oauth-as",
        auth_server_provider=provider,  # type: ignore[arg-type]
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(own_issuer),
            resource_server_url=None,
            client_registration_options=ClientRegistrationOptions(enabled=True),
            revocation_options=RevocationOptions(enabled=True),
        ),
    ).streamable_http_app()
    mcp_app = build_mcp(provider, resource=resource, issuer=chosen).streamable_http_app()
    with _serve(auth_app, as_sock), _serve(mcp_app, rs_sock):
        yield OAuthWorld(url=resource, issuer=chosen, provider=provider)
