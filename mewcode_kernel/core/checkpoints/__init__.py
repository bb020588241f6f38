"""Checkpoints and revert: before a turn first changes a file, its content is
saved beside the session (a created file is recorded as created), so the
turn can be reverted later, from the cell that ran it or with ``/rewind``,
even after a kernel restart. UI-free: front ends show ``RevertPlan``s.

Commands (``bash``) are not followed: a turn that ran one lists it as not
tracked.
"""

from __future__ import annotations

from .lookup import find_turn, store_of
from .recorder import TurnCheckpoints
from .records import CellMark, FileEntry, FileStatus, NotebookEntry, TurnRecord
from .revert import (
    Action,
    RevertItem,
    RevertPlan,
    TurnRevert,
    apply_all,
    apply_revert,
    plan_all,
    plan_revert,
)
from .signing import user_key
from .store import MAX_SNAPSHOT_BYTES, CheckpointStore, read_snapshot, stored_turns

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "Action",
    "CellMark",
    "CheckpointStore",
    "FileEntry",
    "FileStatus",
    "NotebookEntry",
    "RevertItem",
    "RevertPlan",
    "TurnCheckpoints",
    "TurnRecord",
    "TurnRevert",
    "apply_all",
    "apply_revert",
    "find_turn",
    "plan_all",
    "plan_revert",
    "read_snapshot",
    "store_of",
    "stored_turns",
    "user_key",
]
