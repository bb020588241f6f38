"""Background work as the kernel's activity, for idle cullers.

Jupyter Server culls a kernel that has been idle too long: it takes a
kernel's state from the ``status`` messages whose parent is a request it
tracks (an ``execute_request``), and its last activity from any message of
or about such a request. A background turn runs after its cell ended, so
without more the kernel reports ``idle`` and goes quiet while it works, and
a culler (Jupyter Server's, or JupyterHub's, which reads the server's last
activity) would shut it down mid-task.

So the controller reports here whenever a task manager's work starts or
ends, and the kernel (the one listener) keeps reporting itself busy while
any background task is queued or running (see ``MewcodeKernel``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mewcode_kernel.core.tasks import TaskManager, TaskUpdate

__all__ = ["is_active", "set_listener", "watch"]

Listener = Callable[[bool], None]

_listener: Listener | None = None
_busy: weakref.WeakSet[TaskManager] = weakref.WeakSet()


def is_active() -> bool:
    """Whether any background task is queued or running now."""
    return bool(_busy)


def set_listener(listener: Listener | None) -> None:
    """Call ``listener(active)`` whenever background work starts (``True``)
    or the last of it ends (``False``); told the state at once."""
    global _listener
    _listener = listener
    if listener is not None:
        listener(is_active())


def watch(manager: TaskManager) -> Callable[[], None]:
    """Report ``manager``'s work from now on; returns the unsubscriber."""

    def on_update(update: TaskUpdate) -> None:
        if update.event is None:  # a change of state, not one of the work's events
            _changed(manager)

    unsubscribe = manager.subscribe(on_update)
    _changed(manager)

    def stop() -> None:
        unsubscribe()
        was = is_active()
        _busy.discard(manager)
        if was != is_active() and _listener is not None:
            _listener(is_active())

    return stop


def _changed(manager: TaskManager) -> None:
    was = is_active()
    if any(info.state in ("queued", "running") for info in manager.list()):
        _busy.add(manager)
    else:
        _busy.discard(manager)
    if was != is_active() and _listener is not None:
        _listener(is_active())
