"""Reading a stored session back: tolerant of corrupt and truncated lines."""

from __future__ import annotations

import contextlib
import difflib
import gc
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..conversation import Conversation, repair_tool_pairs
from ..errors import SessionError
from ..messages import Message, scrub_message
from ..ownership import is_mine
from ..prompt.turn import prompt_text
from ._files import (
    COMPACT_MARKER,
    CONVERSATION_FILE,
    SessionMarker,
    decode_line,
    modified_at,
    open_regular,
    read_regular,
    safe_sessions_dir,
    sessions_dir,
)
from .meta import PROMPT_KEEP_CHARS, SessionMeta, read_meta
from .owner import check_mine

__all__ = [
    "LoadedSession",
    "first_prompt_in",
    "load_session",
    "read_conversation",
    "resolve_session_id",
]

# How far into a conversation to look for the first prompt when meta lacks it.
_PROMPT_SCAN_LINES = 200


@dataclass(frozen=True, kw_only=True, slots=True)
class LoadedSession:
    """A session read from disk.

    ``messages`` is ready to continue: dangling tool calls are answered by
    error results (``closed_dangling`` of them), and the messages doing so are
    also in ``unsaved`` (not on disk yet; ``SessionStore.resume`` writes them).
    ``skipped_lines`` counts corrupt lines, including a truncated last line
    (``truncated_tail``) left by a crash mid-write.

    A compacted session loads from its last complete ``compact`` marker:
    ``messages`` are the summary and what followed; ``compacted_from`` is how
    many stored messages came before it (``None``: never compacted).
    ``broken_compaction`` is set when the last compaction was cut short by a
    crash and ignored (``SessionStore.resume`` then records the loaded state
    afresh). ``last_activity`` is when the conversation file last changed.
    ``repaired`` counts what was mended before the end of the log: tool calls
    answered, stray results dropped, invalid characters (lone surrogates)
    replaced; the repaired conversation is then recorded afresh on resume.
    """

    id: str
    path: Path
    meta: SessionMeta
    messages: list[Message]
    markers: tuple[SessionMarker, ...] = ()
    skipped_lines: int = 0
    truncated_tail: bool = False
    closed_dangling: int = 0
    unsaved: tuple[Message, ...] = ()
    compacted_from: int | None = None
    last_activity: datetime | None = None
    broken_compaction: bool = False
    repaired: int = 0


def load_session(root: Path, session_id: str) -> LoadedSession:
    """Load session ``session_id`` (a unique prefix is enough) of project ``root``.

    Raises ``SessionError`` for an unknown or ambiguous id, or an unreadable file.
    """
    sid = resolve_session_id(root, session_id)
    directory = sessions_dir(root) / sid
    check_mine(directory, sid)
    path = directory / CONVERSATION_FILE
    last_activity = modified_at(path)
    messages, markers, skipped, truncated = read_conversation(path)
    start, end = compaction_window(markers, len(messages))
    broken = end < len(messages)
    messages = messages[start:end]
    scrubbed = [scrub_message(m) for m in messages]
    messages, repaired = repair_tool_pairs([m for m, _ in scrubbed])
    repaired += sum(n for _, n in scrubbed)
    unsaved: list[Message] = []
    conversation = Conversation(messages, on_append=unsaved.append)
    closed = conversation.close_dangling()
    return LoadedSession(
        id=sid,
        path=directory,
        meta=read_meta(directory) or SessionMeta.guessed(sid),
        messages=conversation.messages,
        markers=tuple(markers),
        skipped_lines=skipped,
        truncated_tail=truncated,
        closed_dangling=closed,
        unsaved=tuple(unsaved),
        compacted_from=start if start else None,
        last_activity=last_activity,
        broken_compaction=broken,
        repaired=repaired,
    )


def compaction_window(markers: Sequence[SessionMarker], count: int) -> tuple[int, int]:
    """``(start, end)``: the stored messages that make up the conversation.

    From the last ``compact`` marker whose promised messages were all
    written, to the end; a marker cut short by a crash is ignored together
    with what followed it (the conversation before it stands).
    """
    compacts = [m for m in markers if m.type == COMPACT_MARKER]
    end = count
    for marker in reversed(compacts):
        promised = marker.data.get("messages")
        if isinstance(promised, int) and end - marker.position >= promised:
            return marker.position, end
        end = marker.position  # incomplete: drop it and everything after
    return 0, end


def read_conversation(path: Path) -> tuple[list[Message], list[SessionMarker], int, bool]:
    """Parse a ``conversation.jsonl``: ``(messages, markers, skipped_lines,
    truncated_tail)``. A missing file reads as empty; blank lines are ignored.
    ``SessionError`` when it is a symbolic link or not a regular file."""
    try:
        data = read_regular(path)
    except FileNotFoundError:
        return [], [], 0, False
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror}") from None
    lines = data.split(b"\n")  # never splitlines(): JSON strings may hold U+2028 etc.
    tail = lines.pop()  # b"" when the file ends with a newline
    with _gc_paused():
        return _parse(lines, tail)


def _parse(lines: list[bytes], tail: bytes) -> tuple[list[Message], list[SessionMarker], int, bool]:
    messages: list[Message] = []
    markers: list[SessionMarker] = []
    skipped = 0
    for line in lines:
        if not line or line.isspace():
            continue
        item = decode_line(line)
        if isinstance(item, Message):
            messages.append(item)
        elif item is None:
            skipped += 1
        else:
            markers.append(SessionMarker(type=item[0], data=item[1], position=len(messages)))
    truncated = False
    if tail and not tail.isspace():
        # An unterminated last line: a crash mid-write, unless it happens to be whole.
        item = decode_line(tail)
        if isinstance(item, Message):
            messages.append(item)
        elif item is None:
            skipped += 1
            truncated = True
        else:
            markers.append(SessionMarker(type=item[0], data=item[1], position=len(messages)))
    return messages, markers, skipped, truncated


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Building tens of thousands of models triggers repeated full collections
    that find nothing (the new objects hold no cycles); pausing the collector
    for the parse halves the load time of a large session."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def own_session_dirs(directory: Path) -> list[os.DirEntry[str]]:
    """The session folders in ``directory`` that are the user's own: real
    folders (a link is not one of this project's: writing through it would
    append this conversation to another folder) owned by them (in a shared
    project, others' sessions sit beside them). ``OSError`` when unreadable."""
    found = []
    for entry in os.scandir(directory):
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            if is_mine(entry.stat(follow_symlinks=False)):
                found.append(entry)
        except OSError:
            continue
    return found


def _plain_name(text: str) -> bool:
    return bool(text) and text not in (".", "..") and "\x00" not in text and "/" not in text


def resolve_session_id(root: Path, session_id: str) -> str:
    """The stored id that ``session_id`` names: itself, or the one stored id it
    is a prefix of, among the user's own sessions. Raises ``SessionNotYours``
    when it names another user's session exactly, ``SessionError`` naming
    close matches otherwise, or when the sessions folder is reached through
    a symlink."""
    directory = safe_sessions_dir(root)
    wanted = session_id.strip()
    try:
        known = sorted(e.name for e in own_session_dirs(directory))
    except FileNotFoundError:
        known = []
    except OSError as exc:
        raise SessionError(f"cannot read {directory}: {exc.strerror}") from None
    if wanted not in known and _plain_name(wanted):
        check_mine(directory / wanted, wanted)  # another user's, named exactly: say so
    if wanted in known:
        return wanted
    matches = [k for k in known if wanted and k.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
        raise SessionError(f"session id {session_id!r} is ambiguous: {shown}")
    if not known:
        raise SessionError(f"no session {session_id!r}: there are no stored sessions in {root}")
    close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; newest is {known[-1]}"
    raise SessionError(f"no session {session_id!r}{hint}")


def first_prompt_in(path: Path, *, max_lines: int = _PROMPT_SCAN_LINES) -> str | None:
    """The text of the first user message with text among the first lines of a
    conversation file (used when meta lacks it). ``SessionError`` when the
    file is a symbolic link or not a regular file."""
    try:
        with open(open_regular(path, os.O_RDONLY), "rb") as f:
            for _, line in zip(range(max_lines), f, strict=False):
                item = decode_line(line.rstrip(b"\n"))
                if isinstance(item, Message) and item.role == "user" and "compact" not in item.meta:
                    text = prompt_text(item).strip()
                    if text:
                        return text[:PROMPT_KEEP_CHARS]
    except OSError:
        return None
    return None
