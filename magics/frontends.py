"""Which front ends can draw widgets, so a live cell is drawn by widgets only
where they show (``renderer_for``), and as text asking over stdin elsewhere.

There is no kernel message that says "I render widgets". What a front end
with a widget manager does say: when it connects (and after every restart)
its manager asks the kernel for the widgets it holds, by opening the
``jupyter.widget.control`` comm or sending a ``comm_info_request`` for
``jupyter.widget`` (ipywidgets 8's managers: JupyterLab, Notebook 7,
Voila), and it answers widget comms afterwards. A terminal front end
(``jupyter console``, qtconsole) never does, but asks ``is_complete`` at
every Enter. Each message carries its client's session id in its header, so
the kernel learns this per client: two front ends on one kernel each get
what they can show.

``FrontEnds.watch`` notes these messages on the way to the kernel's own
handlers. In the ``mewcode`` kernel that starts with the kernel, so a
client that never showed a widget manager has none. In a stock kernel the
extension is loaded by a cell, after the front end's manager may already
have spoken: there a client counts as a terminal only once it asked
``is_complete``, else as before (widgets).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import Any, Literal

__all__ = [
    "RENDERER_ENV",
    "WIDGET_TARGETS",
    "FrontEnds",
    "RendererChoice",
    "front_ends",
    "renderer_for",
]

RENDERER_ENV = "MEWCODE_RENDERER"
"""``auto`` (default), ``widgets`` or ``text``: how a live cell is drawn."""

#: the comm targets a widget manager talks to (ipywidgets 8 and 7)
WIDGET_TARGETS = frozenset({"jupyter.widget.control", "jupyter.widget"})

RendererChoice = Literal["widgets", "text"]
Handler = Callable[[Any, Any, Any], Any]


class FrontEnds:
    """What the clients of one kernel have shown about themselves."""

    def __init__(self, *, from_start: bool) -> None:
        #: whether every message since the kernel started was seen
        self.from_start = from_start
        self._lock = threading.Lock()  # subshells handle comm messages on their own threads
        self._widgets: set[str] = set()
        self._terminals: set[str] = set()

    def note(self, msg: Mapping[str, Any], comm_target: str | None = None) -> None:
        """Record what one shell message says about its client."""
        header = msg.get("header") or {}
        client = header.get("session")
        if not isinstance(client, str) or not client:
            return
        kind = header.get("msg_type")
        content = msg.get("content") or {}
        if kind == "is_complete_request":
            with self._lock:
                self._terminals.add(client)
            return
        if kind in ("comm_open", "comm_info_request"):
            target = content.get("target_name")
        else:  # comm_msg / comm_close: the target of the comm it is for
            target = comm_target
        if isinstance(target, str) and target in WIDGET_TARGETS:
            with self._lock:
                self._widgets.add(client)

    def shows_widgets(self, client: str | None) -> bool:
        """Whether the client with session id ``client`` can draw widgets."""
        with self._lock:
            if client in self._widgets:
                return True
            if self.from_start:
                return False
            return client not in self._terminals


def _comm_target(kernel: Any, msg: Mapping[str, Any]) -> str | None:
    comm_id = (msg.get("content") or {}).get("comm_id")
    manager = getattr(kernel, "comm_manager", None)
    comm = manager.get_comm(comm_id) if manager is not None and comm_id else None
    target = getattr(comm, "target_name", None)
    return target if isinstance(target, str) else None


def _noting(kernel: Any, seen: FrontEnds, handler: Handler) -> Handler:
    def handle(stream: Any, ident: Any, msg: Any) -> Any:
        try:
            kind = msg["header"]["msg_type"]
            target = _comm_target(kernel, msg) if kind in ("comm_msg", "comm_close") else None
            seen.note(msg, target)
        except Exception:  # noting must never keep a message from its handler
            pass
        return handler(stream, ident, msg)

    handle.__wrapped__ = handler  # type: ignore[attr-defined]
    return handle


_WATCHED = ("comm_open", "comm_msg", "comm_close", "comm_info_request", "is_complete_request")


def front_ends(kernel: Any, *, from_start: bool = False) -> FrontEnds | None:
    """The kernel's ``FrontEnds``, watching its shell messages from now on
    (``None`` for a shell without a kernel). Idempotent."""
    if kernel is None:
        return None
    seen = getattr(kernel, "_mewcode_front_ends", None)
    if isinstance(seen, FrontEnds):
        return seen
    handlers = getattr(kernel, "shell_handlers", None)
    if not isinstance(handlers, dict):
        return None
    seen = FrontEnds(from_start=from_start)
    for kind in _WATCHED:
        original = handlers.get(kind)
        if original is not None:
            handlers[kind] = _noting(kernel, seen, original)
    kernel._mewcode_front_ends = seen
    return seen


def _client(kernel: Any) -> str | None:
    try:
        parent = kernel.get_parent()
    except Exception:  # an older kernel: get_parent takes a channel
        return None
    session = (parent or {}).get("header", {}).get("session") if isinstance(parent, dict) else None
    return session if isinstance(session, str) else None


def renderer_for(kernel: Any) -> RendererChoice:
    """How the running cell's live output is drawn: ``MEWCODE_RENDERER`` when
    set to ``widgets`` or ``text``, else (``auto``) widgets when the cell's
    client can draw them. ``ValueError`` for any other value."""
    choice = os.environ.get(RENDERER_ENV, "").strip().lower() or "auto"
    if choice not in ("auto", "widgets", "text"):
        raise ValueError(f"{RENDERER_ENV} must be 'auto', 'widgets' or 'text', not {choice!r}")
    if choice != "auto":
        return choice  # type: ignore[return-value]
    seen = front_ends(kernel)
    if seen is None:
        return "widgets"
    return "widgets" if seen.shows_widgets(_client(kernel)) else "text"
