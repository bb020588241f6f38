"""``MewcodeAgent``: the ACP agent, one per connection, holding its sessions.

Each request is answered from the same core the notebook uses:
``session/new`` opens a session in the client's ``cwd`` (the project root)
with the client's MCP servers added, and names it by its stored id;
``session/load`` resumes a stored session by its exact id (one started in a
notebook too) and replays it; ``session/list`` lists the project's stored
sessions; ``session/set_mode`` sets one of the five permission modes;
``session/prompt`` runs a turn, ``session/cancel`` stops it. A request for a
session this connection did not open or load is refused (an unknown
session), as is a malformed one (the library answers invalid params).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from datetime import UTC
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_available_commands
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from mewcode_kernel.core import AgentSession, open_session
from mewcode_kernel.core.errors import MewcodeError, SessionInUse
from mewcode_kernel.core.permission import MODES, parse_mode
from mewcode_kernel.core.session import is_session_id, list_sessions

from .approvals import ClientApprovals
from .commands import advertised
from .history import replay
from .mcp_servers import client_servers
from .sessions import AcpSession

__all__ = ["MODE_TEXT", "MewcodeAgent"]

log = logging.getLogger(__name__)

MODE_TEXT = {
    "default": ("Default", "Ask before edits, commands and anything the rules do not allow"),
    "acceptEdits": ("Accept edits", "Edits inside the project without asking"),
    "plan": ("Plan", "Read-only: look around and plan, change nothing"),
    "bypassPermissions": ("Bypass permissions", "Allow what no rule denies (protected paths ask)"),
    "dontAsk": ("Don't ask", "Decide as default, deny whatever would ask"),
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mewcode")
    except PackageNotFoundError:
        return "0"


def _modes(session: AgentSession) -> SessionModeState:
    return SessionModeState(
        current_mode_id=session.mode,
        available_modes=[
            SessionMode(id=m, name=MODE_TEXT[m][0], description=MODE_TEXT[m][1]) for m in MODES
        ],
    )


def _project(cwd: str) -> Path:
    """The project root the client names: an absolute path of a directory."""
    if not isinstance(cwd, str) or "\0" in cwd or not os.path.isabs(cwd):
        raise RequestError.invalid_params({"cwd": "must be an absolute path"})
    path = Path(cwd)
    if not path.is_dir():
        raise RequestError.invalid_params({"cwd": f"not a directory: {cwd}"})
    return path


class MewcodeAgent:
    """The ACP ``Agent`` of one connection (see the module docstring)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._sessions: dict[str, AcpSession] = {}
        self._opening: set[asyncio.Task[Any]] = set()

    # --- connection -----------------------------------------------------------------

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        # one version is spoken: a client asking for another is answered with it
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="mewcode", title="MewCode", version=_version()),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **_: Any) -> None:
        raise RequestError.invalid_params({"methodId": "MewCode needs no authentication"})

    # --- sessions -------------------------------------------------------------------

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        session = await self._open(_project(cwd), mcp_servers)
        try:
            session_id = await asyncio.to_thread(session.ensure_log)
        except BaseException:
            await session.aclose()
            raise
        live = self._adopt(session_id, session)
        self._announce(live)
        return NewSessionResponse(session_id=session_id, modes=_modes(session))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        if not isinstance(session_id, str) or not is_session_id(session_id):
            raise RequestError.invalid_params({"sessionId": "not a MewCode session id"})
        root = _project(cwd)
        live = self._sessions.get(session_id)
        if live is None:
            session = await self._open(root, mcp_servers)
            try:
                await session.resume(session_id)
            except SessionInUse as exc:
                await session.aclose()
                details = {"sessionId": session_id, "details": str(exc)}
                raise RequestError.invalid_request(details) from None
            except MewcodeError as exc:
                await session.aclose()
                raise RequestError.resource_not_found(session_id) from exc
            except BaseException:
                await session.aclose()
                raise
            live = self._adopt(session_id, session)
        for update in replay(
            live.session.conversation.messages, live.session.root, live.session.tools.get
        ):
            await self._send(session_id, update)
        self._announce(live)
        return LoadSessionResponse(modes=_modes(live.session))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        if cwd is None:
            return ListSessionsResponse(sessions=[])
        root = _project(cwd)
        try:
            stored = await asyncio.to_thread(list_sessions, root)
        except MewcodeError as exc:
            raise RequestError.invalid_params({"cwd": str(exc)}) from None
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=s.id,
                    cwd=str(root),
                    title=s.title or s.first_prompt or None,
                    updated_at=s.updated.astimezone(UTC).isoformat(),
                )
                for s in stored
                if s.problem is None
            ]
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        live = self._live(session_id)
        try:
            live.session.mode = parse_mode(mode_id)
        except ValueError as exc:
            raise RequestError.invalid_params({"modeId": str(exc)}) from None
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        live = self._live(session_id)
        reason = await live.prompt(prompt)
        return PromptResponse(stop_reason=reason)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **_: Any) -> None:
        live = self._sessions.get(session_id) if isinstance(session_id, str) else None
        if live is not None:
            live.cancel()

    # --- the live sessions ----------------------------------------------------------

    def _live(self, session_id: str) -> AcpSession:
        live = self._sessions.get(session_id) if isinstance(session_id, str) else None
        if live is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session {session_id!r}"})
        return live

    async def _open(self, root: Path, mcp_servers: list[Any] | None) -> AgentSession:
        servers = client_servers(mcp_servers)
        try:
            session = await asyncio.to_thread(open_session, root, more_mcp_servers=servers)
        except (MewcodeError, ValueError) as exc:
            raise RequestError.internal_error({"details": str(exc)}) from None
        try:
            await session.__aenter__()  # its MCP servers start
        except BaseException:
            await session.aclose()
            raise
        return session

    def _adopt(self, session_id: str, session: AgentSession) -> AcpSession:
        approvals = ClientApprovals(
            self._client, session_id, session.root, session.safety.redactor.redact
        )

        async def send(update: Any) -> None:
            await self._send(session_id, update)

        live = self._sessions[session_id] = AcpSession(session, approvals, send)
        return live

    def _announce(self, live: AcpSession) -> None:
        """The session's commands, sent once the client knows the session
        (after the response that names it is on its way)."""
        task = asyncio.ensure_future(self._send_quietly(live.id, advertised(live.session)))
        self._opening.add(task)
        task.add_done_callback(self._opening.discard)

    async def _send_quietly(self, session_id: str, commands: list[Any]) -> None:
        with contextlib.suppress(Exception):  # the client may be gone already
            await self._send(session_id, update_available_commands(commands))

    async def _send(self, session_id: str, update: Any) -> None:
        await self._client.session_update(session_id=session_id, update=update)

    async def aclose(self) -> None:
        """End every session (the client is gone, or the server stops)."""
        for task in list(self._opening):
            task.cancel()
        sessions, self._sessions = list(self._sessions.values()), {}
        for live in sessions:
            with contextlib.suppress(Exception):
                await live.aclose()
