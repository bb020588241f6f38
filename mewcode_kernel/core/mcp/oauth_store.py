"""Where an MCP server's OAuth tokens live: one file per server *and URL*
under the user's MewCode folder (``mcp-oauth/<name>-<digest>.json``),
``0600`` in a ``0700`` folder, written whole (a new file renamed over the
old, never through a link) and read without following links.

The file is keyed by the server's exact URL as well as its name: a project
that defines a server of the same name pointing somewhere else gets a file
of its own (empty), never the user's tokens. Every token and client secret
read or written is handed to ``on_secret`` (the session's redactor), so a
server that echoes it back, or an error that quotes it, is scrubbed before
anything is stored, shown or sent to the model.

With no MewCode folder (no home directory) tokens stay in memory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from ..fs.durable import atomic_write
from ..ownership import ensure_private_dir, is_mine

__all__ = ["AUTH_DIR", "AuthState", "OAuthStore", "store_path"]

AUTH_DIR = "mcp-oauth"
"""The folder in the user's MewCode folder that holds the tokens."""

AuthState = Literal["none", "valid", "expired", "refreshable"]

SecretSink = Callable[[Sequence[tuple[str, str]]], None]


def store_path(home: Path, name: str, url: str) -> Path:
    """The file of server ``name`` at ``url`` (the name keeps it readable; the
    digest of the URL keeps another URL of the same name out of it)."""
    digest = hashlib.sha256(url.strip().encode()).hexdigest()[:16]
    return home / AUTH_DIR / f"{name}-{digest}.json"


@dataclass(kw_only=True, slots=True)
class _Record:
    client_info: dict[str, Any] | None = None
    tokens: dict[str, Any] | None = None
    expires_at: float | None = None
    server_metadata: dict[str, Any] | None = None


class OAuthStore:
    """The SDK's ``TokenStorage`` for one server (see the module docstring).
    ``expires_at`` is kept beside the tokens: the SDK only knows a token's
    lifetime from the response it came in, so a token loaded in a later
    session would otherwise look valid forever and never be refreshed."""

    def __init__(self, home: Path | None, name: str, url: str, on_secret: SecretSink) -> None:
        self.name = name
        self.url = url
        self.path = store_path(home, name, url) if home is not None else None
        self._on_secret = on_secret
        self._memory = _Record()

    # --- the SDK's TokenStorage ---------------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        record = self._read()
        if record.tokens is None:
            return None
        try:
            tokens = OAuthToken.model_validate(record.tokens)
        except ValidationError:
            return None
        if record.expires_at is not None:
            tokens.expires_in = max(0, int(record.expires_at - time.time()))
        self._know(tokens=tokens)
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._know(tokens=tokens)
        record = self._read()
        record.tokens = tokens.model_dump(mode="json", exclude_none=True)
        record.tokens.pop("expires_in", None)  # only meaningful from when it was received
        record.expires_at = time.time() + tokens.expires_in if tokens.expires_in else None
        self._write(record)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        record = self._read()
        if record.client_info is None:
            return None
        try:
            info = OAuthClientInformationFull.model_validate(record.client_info)
        except ValidationError:
            return None
        self._know(client=info)
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._know(client=client_info)
        record = self._read()
        record.client_info = client_info.model_dump(mode="json", exclude_none=True)
        self._write(record)

    # --- what /mcp shows and does -------------------------------------------------

    def state(self) -> AuthState:
        """Whether there are tokens, and whether they are still good."""
        record = self._read()
        if not record.tokens or not record.tokens.get("access_token"):
            return "none"
        if record.expires_at is None or record.expires_at > time.time():
            return "valid"
        return "refreshable" if record.tokens.get("refresh_token") else "expired"

    def redirect_port(self) -> int | None:
        """The loopback port the stored registration redirects to, if any."""
        info = self._read().client_info or {}
        for uri in info.get("redirect_uris") or ():
            with contextlib.suppress(ValueError):
                port = urlsplit(str(uri)).port
                if port:
                    return port
        return None

    def server_metadata(self) -> dict[str, Any] | None:
        """The authorization server's metadata, as found at the last login."""
        return self._read().server_metadata

    def keep_server_metadata(self, metadata: dict[str, Any]) -> None:
        record = self._read()
        record.server_metadata = metadata
        self._write(record)

    def forget_tokens(self) -> dict[str, Any] | None:
        """Drop the tokens (keeping the client's registration); returns what
        was dropped, for revocation."""
        record = self._read()
        dropped, record.tokens, record.expires_at = record.tokens, None, None
        self._write(record)
        return dropped

    def known_secrets(self) -> None:
        """Hand what the file holds to the redactor (at session start)."""
        record = self._read()
        pairs = [
            (f"mcp-oauth:{self.name}", str(v))
            for v in (
                (record.tokens or {}).get("access_token"),
                (record.tokens or {}).get("refresh_token"),
                (record.client_info or {}).get("client_secret"),
            )
            if v
        ]
        if pairs:
            self._on_secret(pairs)

    # --- the file -----------------------------------------------------------------

    def _know(
        self, *, tokens: OAuthToken | None = None, client: OAuthClientInformationFull | None = None
    ) -> None:
        values = []
        if tokens is not None:
            values += [tokens.access_token, tokens.refresh_token]
        if client is not None:
            values.append(client.client_secret)
        pairs = [(f"mcp-oauth:{self.name}", v) for v in values if v]
        if pairs:
            self._on_secret(pairs)

    def _read(self) -> _Record:
        if self.path is None:
            m = self._memory
            return _Record(
                client_info=m.client_info,
                tokens=m.tokens,
                expires_at=m.expires_at,
                server_metadata=m.server_metadata,
            )
        data = _read_private(self.path)
        if not isinstance(data, dict) or data.get("server_url") != self.url:
            return _Record()
        expires = data.get("expires_at")
        return _Record(
            client_info=_dict(data.get("client_info")),
            tokens=_dict(data.get("tokens")),
            expires_at=float(expires) if isinstance(expires, int | float) else None,
            server_metadata=_dict(data.get("server_metadata")),
        )

    def _write(self, record: _Record) -> None:
        if self.path is None:
            self._memory = record
            return
        data = {
            "server_url": self.url,
            "client_info": record.client_info,
            "tokens": record.tokens,
            "expires_at": record.expires_at,
            "server_metadata": record.server_metadata,
        }
        _write_private(self.path, json.dumps(data, indent=1))


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _read_private(path: Path) -> Any:
    """The JSON in ``path`` if it is a regular file of ours (never through a
    link); one others could read is narrowed to ``0600`` first."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not is_mine(st):
            return None
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, 0o600)
        with os.fdopen(os.dup(fd), "rb") as f:
            raw = f.read(1 << 20)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole: a new ``0600`` file (never an
    existing one or a link's target) renamed over it."""
    ensure_private_dir(path.parent)
    atomic_write(path, text.encode("utf-8"))
