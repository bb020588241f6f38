"""Warming the kernel up for its first agent cell, in a background thread.

Started by the ``mewcode`` kernel once it has answered its first
``kernel_info_request`` (so kernel start-up itself stays as fast as a plain
IPython kernel): imports the agent core, the widget renderer and the SDK of
the provider the project's config would use, which otherwise the first cell
would wait for. An agent cell run meanwhile waits for it (``finished``)
rather than importing the same packages on a second thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

__all__ = ["WAIT_LIMIT", "finished", "start_warm_up", "warm_up"]

log = logging.getLogger(__name__)

_running: threading.Thread | None = None


def warm_up(root: Path) -> list[str]:
    """Import what the first agent cell needs; returns the modules imported."""
    done = []
    import mewcode_kernel.core.agent_session  # noqa: F401  (the core)

    from . import turn  # noqa: F401  (what a turn runs on)

    done.append("mewcode_kernel.core")
    try:
        from . import render_widgets  # noqa: F401  (ipywidgets, anywidget)

        done.append("magics.render_widgets")
    except ImportError:
        pass
    from mewcode_kernel.core.config import load_config
    from mewcode_kernel.core.providers.warmup import warm_up as warm_provider

    try:
        settings = load_config(root).select_provider()
    except Exception:  # the cell will report a bad config; nothing to warm
        return done
    done.append(warm_provider(settings))
    return done


def start_warm_up(root: Path | None = None) -> threading.Thread:
    """Run ``warm_up`` in a daemon thread (it never keeps the kernel from exiting)."""
    from mewcode_kernel.core.errors import ConfigError
    from mewcode_kernel.core.locations import locate_root

    try:
        where = locate_root(root).path
    except ConfigError:  # a bad MEWCODE_ROOT: the first cell says so
        where = Path.cwd()

    def run() -> None:
        try:
            warm_up(where)
        except Exception:  # a warm-up is an optimisation: never an error
            log.debug("MewCode warm-up failed", exc_info=True)

    global _running
    thread = threading.Thread(target=run, name="mewcode-warm-up", daemon=True)
    thread.start()
    _running = thread
    return thread


#: The longest an agent cell waits for the warm-up before importing by itself.
WAIT_LIMIT = 120.0


async def finished() -> None:
    """Wait (without blocking the loop) until a running warm-up is over."""
    thread = _running
    if thread is not None and thread.is_alive():
        await asyncio.to_thread(thread.join, WAIT_LIMIT)
