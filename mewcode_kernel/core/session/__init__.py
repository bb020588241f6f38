"""Session persistence: one directory per session under
``<root>/.mewcode/sessions/<id>/`` holding ``conversation.jsonl`` (appended and
fsync'd message by message) and ``meta.json``.

Typical use::

    writer = SessionStore.create(root, provider="anthropic", model="claude-sonnet-4-5")
    conversation = Conversation(on_append=writer.append, on_replace=writer.replace)

    loaded, writer = SessionStore.resume(root, "20261130-1122")  # id prefix
    conversation = Conversation(loaded.messages, on_append=writer.append)

    for info in list_sessions(root): ...
"""

from __future__ import annotations

from ._files import CONVERSATION_FILE, META_FILE, SESSIONS_DIR, SessionMarker, sessions_dir
from .ids import is_session_id, new_session_id, session_id_time
from .listing import SessionInfo, list_sessions
from .load import LoadedSession, load_session, resolve_session_id
from .meta import SessionMeta
from .store import SessionStore, SessionWriter

__all__ = [
    "CONVERSATION_FILE",
    "META_FILE",
    "SESSIONS_DIR",
    "LoadedSession",
    "SessionInfo",
    "SessionMarker",
    "SessionMeta",
    "SessionStore",
    "SessionWriter",
    "is_session_id",
    "list_sessions",
    "load_session",
    "new_session_id",
    "resolve_session_id",
    "session_id_time",
    "sessions_dir",
]
