"""Context that lasts: token accounting, L1 offload of large tool results, L2
compaction of older turns.

* ``tokens``: estimates (about four characters per token) and the usage
  anchor they extend;
* ``offload``: results over a threshold go to
  ``.mewcode/sessions/<id>/tool-results/<call-id>.txt``, a preview stays;
* ``compact``: split point, summary request and summary message;
* ``manager``: ``ContextManager``, what the agent loop calls;
* ``state``: ``ContextState``, the per-session part (reset with the session);
* ``report``: what ``/context`` shows.
"""

from __future__ import annotations

from .compact import COMPACT_META, CompactionError, choose_split, is_summary
from .manager import DEFAULT_WINDOW, ContextManager, ContextPolicy
from .offload import DEFAULT_OFFLOAD_CHARS, TOOL_RESULTS_DIR, offload_path, save_full_text
from .state import BREAKER_LIMIT, CompactionRecord, ContextState, Offloaded
from .tokens import estimate_messages, estimate_request, estimate_text

__all__ = [
    "BREAKER_LIMIT",
    "COMPACT_META",
    "DEFAULT_OFFLOAD_CHARS",
    "DEFAULT_WINDOW",
    "TOOL_RESULTS_DIR",
    "CompactionError",
    "CompactionRecord",
    "ContextManager",
    "ContextPolicy",
    "ContextState",
    "Offloaded",
    "choose_split",
    "estimate_messages",
    "estimate_request",
    "estimate_text",
    "is_summary",
    "offload_path",
    "save_full_text",
]
