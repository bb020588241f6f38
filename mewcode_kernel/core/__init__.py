"""The MewCode agent core: no IPython, no widgets, no SDK outside its provider
module. Front ends drive an ``AgentSession`` and render its events."""

from __future__ import annotations

from .agent_session import AgentSession, open_session

__all__ = ["AgentSession", "open_session"]
