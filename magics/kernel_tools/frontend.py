"""The open notebook, reached through MewCode's JupyterLab / Notebook 7
extension (``frontend/``, shipped prebuilt in ``magics/labextension``).

The extension opens a comm to the target ``mewcode.notebook`` for each
notebook panel on a kernel that has it (and again when the kernel says it
is ready: ``announce``), telling its path. The kernel answers nothing
until it needs the notebook; then it sends a request (``read``, ``apply``)
and awaits the answer, which ipykernel delivers while the agent cell awaits.
Each request names its id; an answer resolves that request's future,
thread-safely (a front end may send on a subshell).

Loaded with the extension (the comm target is registered at once, so a
front end links before the first agent cell); the agent core only when a
request is made. ``live.LiveNotebooks`` reads and changes notebooks
through these links.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["TARGET", "FrontendLinks", "Link"]

TARGET = "mewcode.notebook"
READY = "mewcode.notebook.ready"
TIMEOUT = 15.0
"""Seconds a front end gets to answer one request."""


class Link:
    """One notebook panel's comm: its path (as the server names it) and the
    absolute path on this machine."""

    def __init__(self, comm: Any, data: dict[str, Any], owner: FrontendLinks) -> None:
        self.comm = comm
        self.owner = owner
        self.path = ""
        self.file = Path()
        self.opened = time.monotonic()
        self.update(data)

    def update(self, data: dict[str, Any]) -> None:
        path = data.get("path")
        if isinstance(path, str) and path:
            self.path = path
            self.file = _absolute(path, data.get("serverRoot"), self.owner.start_dir)

    async def request(self, op: str, payload: dict[str, Any]) -> dict[str, Any]:
        return await self.owner.request(self, op, payload)


def _absolute(path: str, server_root: Any, start_dir: Path) -> Path:
    """The notebook's file from its server path: under the server's root, or
    (when the front end did not say it) as the kernel was started for it."""
    if isinstance(server_root, str) and server_root.strip():
        return Path(os.path.realpath(os.path.join(os.path.expanduser(server_root), path)))
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(path) and os.path.isabs(session):
        return Path(os.path.realpath(session))
    return Path(os.path.realpath(start_dir / Path(path).name))


class FrontendLinks:
    """The front ends linked to this kernel, and the requests in flight."""

    def __init__(self, start_dir: Path) -> None:
        self.start_dir = start_dir
        self.links: dict[str, Link] = {}
        self._ids = itertools.count(1)
        self._waiting: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = {}
        self._lock = threading.Lock()

    def register(self, kernel: Any) -> None:
        """Accept the extension's comms on ``kernel`` and tell open front ends."""
        manager = getattr(kernel, "comm_manager", None) or _comm_manager()
        if manager is None:
            return
        manager.register_target(TARGET, self._opened)
        self.announce()

    def announce(self) -> None:
        """Ask front ends already open (the magics loaded after the kernel
        started) to link: a comm they answer by opening theirs."""
        try:
            from comm import create_comm

            create_comm(target_name=READY, data={}).close()
        except Exception:  # no front end listening, or no comm support: nothing to tell
            pass

    def _opened(self, comm: Any, msg: dict[str, Any]) -> None:
        data = (msg.get("content") or {}).get("data") or {}
        link = Link(comm, data if isinstance(data, dict) else {}, self)
        self.links[comm.comm_id] = link
        comm.on_msg(lambda m: self._message(link, m))
        comm.on_close(lambda _m: self.links.pop(comm.comm_id, None))

    def _message(self, link: Link, msg: dict[str, Any]) -> None:
        data = (msg.get("content") or {}).get("data") or {}
        if not isinstance(data, dict):
            return
        if data.get("type") == "path":
            link.update(data)
            return
        rid = data.get("id")
        with self._lock:
            waiting = self._waiting.pop(str(rid), None) if rid is not None else None
        if waiting is None:
            return
        loop, future = waiting

        def settle() -> None:
            if not future.done():
                future.set_result(data)

        if _running_loop() is loop:
            settle()
        else:
            loop.call_soon_threadsafe(settle)

    async def request(self, link: Link, op: str, payload: dict[str, Any]) -> dict[str, Any]:
        from mewcode_kernel.core.notebook import EditRefused, NotebookError, StaleCell

        loop = asyncio.get_running_loop()
        rid = str(next(self._ids))
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            self._waiting[rid] = (loop, future)
        try:
            link.comm.send({"type": "request", "id": rid, "op": op, **payload})
            answer = await asyncio.wait_for(future, TIMEOUT)
        except TimeoutError:
            raise NotebookError(
                f"the notebook {link.path} open in the browser did not answer within "
                f"{TIMEOUT:g} s; nothing was changed"
            ) from None
        finally:
            with self._lock:
                self._waiting.pop(rid, None)
        if not answer.get("ok"):
            stale = answer.get("stale")
            if isinstance(stale, dict):
                raise StaleCell(str(stale.get("id")), str(stale.get("source", "")), read=True)
            raise EditRefused(str(answer.get("error") or "the front end refused the change"))
        result = answer.get("result")
        return result if isinstance(result, dict) else {}

    def for_path(self, path: Path) -> Link | None:
        """The newest link showing ``path``."""
        found = [k for k in self.links.values() if k.file == path]
        return max(found, key=lambda k: k.opened) if found else None

    def attached(self) -> Link | None:
        """The notebook this kernel runs for: the one the server started it for
        when linked, else the newest link."""
        if not self.links:
            return None
        session = os.environ.get("JPY_SESSION_NAME", "")
        if session:
            mine = self.for_path(Path(os.path.realpath(session)))
            if mine is not None:
                return mine
        return max(self.links.values(), key=lambda k: k.opened)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _comm_manager() -> Any:
    try:
        from comm import get_comm_manager

        return get_comm_manager()
    except Exception:
        return None
