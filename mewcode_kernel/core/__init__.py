"""The MewCode agent core: no IPython, no widgets, no SDK outside its provider
module. Front ends drive an ``AgentSession`` and render its events.

``AgentSession`` and ``open_session`` are imported on first use, so reading a
small module of the core (the permission modes, say) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent_session import AgentSession
    from .session_wiring import open_session

__all__ = ["AgentSession", "open_session"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import agent_session, session_wiring

        value = getattr(agent_session if name == "AgentSession" else session_wiring, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
