"""L1: large tool results leave the conversation.

A result longer than the threshold is written to
``.mewcode/sessions/<id>/tool-results/<call-id>.txt`` and the conversation
keeps a head-and-tail preview plus that path, which the model can read back
with ``read_file`` (it is inside the project root, where reads are allowed).
A ``read_file`` result is not copied (the file is already on disk): its
preview says to read the file in smaller parts instead, which also keeps a
read of an offloaded output from being offloaded again.

The decision is taken once, when the result is created and before it is
appended, and recorded in the ledger (``ContextState.decisions``): a result
that was sent never changes form, so the cached prefix stays valid.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from ..fs.safe_write import UnsafeWriteError, atomic_write_within
from ..messages import ToolResultBlock, ToolUseBlock
from ..ownership import ensure_private_dir
from .state import ContextState, Offloaded

__all__ = [
    "DEFAULT_OFFLOAD_CHARS",
    "HEAD_CHARS",
    "TAIL_CHARS",
    "TOOL_RESULTS_DIR",
    "offload_path",
    "preview",
    "save_full_text",
    "shape_result",
]

#: Results longer than this (characters, about 5k tokens) are offloaded.
DEFAULT_OFFLOAD_CHARS = 20_000
HEAD_CHARS = 2_000
TAIL_CHARS = 1_000
TOOL_RESULTS_DIR = "tool-results"

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def offload_path(session_dir: Path, call_id: str) -> Path:
    """Where the full output of ``call_id`` is kept."""
    name = _UNSAFE.sub("_", call_id).lstrip(".") or "call"
    return session_dir / TOOL_RESULTS_DIR / f"{name[:120]}.txt"


def _cut_head(text: str, size: int) -> str:
    head = text[:size]
    nl = head.rfind("\n")
    return head[: nl + 1] if nl >= size // 2 else head


def _cut_tail(text: str, size: int) -> str:
    tail = text[-size:]
    nl = tail.find("\n")
    return tail[nl + 1 :] if 0 <= nl < size // 2 else tail


def preview(content: str, note: str, *, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> str:
    """``note`` (in brackets), the start and the end of ``content``, and how much
    was left out between them. Deterministic: the same input, the same text."""
    first = _cut_head(content, head)
    last = _cut_tail(content[len(first) :], tail)
    omitted = len(content) - len(first) - len(last)
    lines = content.count("\n") + (0 if content.endswith("\n") else 1)
    parts = [
        f"[{note} The output has {len(content):,} characters in {lines:,} lines; "
        f"its first {len(first):,} and last {len(last):,} characters follow.]",
        first.rstrip("\n"),
        f"[... {omitted:,} characters omitted ...]",
        last.rstrip("\n"),
    ]
    return "\n".join(parts)


def _display(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def save_full_text(session_dir: Path, name: str, content: str) -> Path:
    """Keep ``content`` as ``offload_path(session_dir, name)``, written from the
    session folder down without following a link (a cloned repository can ship
    ``tool-results``, or a result file, as one). ``OSError`` or
    ``UnsafeWriteError`` when it cannot be kept."""
    path = offload_path(session_dir, name)
    ensure_private_dir(session_dir)
    # a session's files are its user's alone, whatever the umask
    with contextlib.suppress(FileExistsError):
        os.mkdir(path.parent, 0o700)
    atomic_write_within(path, content, [session_dir], mode=0o600)
    return path


def shape_result(
    result: ToolResultBlock,
    call: ToolUseBlock | None,
    *,
    reread: bool = False,
    state: ContextState,
    threshold: int,
    root: Path,
    session_dir: Path | None,
) -> ToolResultBlock:
    """The form in which ``result`` enters the conversation, decided once.

    Without a session directory (an ``Agent`` used on its own) there is
    nowhere to keep the full text, so the result is kept whole. A ``reread``
    result (a file read) is not kept: the model is told to read it in parts.
    Images in a result are kept as they are; only its text is shortened.
    """
    key = result.tool_use_id
    if key in state.decisions and state.decisions[key] is None:
        return result
    content = result.text
    if len(content) <= threshold:
        state.decisions[key] = None
        return result
    saved: Path | None = None
    if reread and call is not None:
        shown = call.input.get("path", "the file")
        note = (
            f"This read is too large for the conversation. Read {shown} in smaller parts "
            "with read_file offset/limit, or search it with grep."
        )
    elif session_dir is None:
        state.decisions[key] = None
        return result
    else:
        try:
            saved = save_full_text(session_dir, key, content)
            note = (
                f"This output is too large for the conversation; the full text is saved in "
                f"{_display(saved, root)}. Read it with read_file (offset/limit for parts) or "
                "search it with grep."
            )
        except (OSError, UnsafeWriteError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            note = f"This output is too large for the conversation and could not be saved ({why})."
    kept = preview(content, note)
    state.decisions[key] = Offloaded(
        call_id=key, path=saved, chars=len(content), kept_chars=len(kept)
    )
    return result.with_text(kept)
