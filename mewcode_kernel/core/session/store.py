"""Writing sessions: ``SessionStore`` creates, reopens or forks one,
``SessionWriter`` appends to it durably.

Only one writer per session: a writer holds the session directory's lock
(``lock``) while it is open, so a second kernel resuming a session in use
gets ``SessionInUse`` and can fork it instead (``SessionStore.fork``: a new
session starting from a copy of the conversation); nothing interleaves.

Each append is one ``write`` of a whole line to an ``O_APPEND`` descriptor
before it returns, so the process dying loses nothing already appended; the
``fsync`` that a crash of the machine needs follows at once in the writer's
``Syncer`` thread, off the turn's path (``syncer``). A crash can at worst
leave a partial last line, which readers skip and which the next writer
terminates before appending. Only messages and ``meta.json`` are written:
provider names and models, never keys or URLs.

A writer given ``redact`` (the session's redactor) passes every line and the
first prompt through it on the way into the file: a key the person pasted
into a prompt, or any other known secret, is stored as ``[REDACTED:NAME]``
(the conversation in memory keeps it; a resumed one has the placeholder).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import SessionError
from ..fs.durable import atomic_write, fsync_dir, write_all
from ..messages import Message
from ..prompt.turn import prompt_text
from ._files import (
    COMPACT_MARKER,
    CONVERSATION_FILE,
    encode_marker,
    encode_message,
    open_regular,
    sessions_dir,
)
from .ids import claim_session_dir
from .load import LoadedSession, first_prompt_in, load_session, resolve_session_id
from .lock import SessionLock
from .meta import PROMPT_KEEP_CHARS, SessionMeta, read_meta, write_meta
from .owner import check_mine, prepare_sessions_dir
from .syncer import Syncer

__all__ = ["SessionStore", "SessionWriter"]

Redact = Callable[[str], str]

# read too: the last byte is checked through the same descriptor
_APPEND_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT


class SessionWriter:
    """Appends to one session. Pass ``append`` / ``replace`` to ``Conversation``
    as ``on_append`` / ``on_replace``. Thread-safe; use as a context manager or
    call ``close``. Errors surface as ``SessionError``."""

    def __init__(self, directory: Path, meta: SessionMeta, *, redact: Redact | None = None) -> None:
        self.path = directory
        self._meta = meta
        self._redact = redact
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._syncer = Syncer(meta.id)
        self._session_lock = SessionLock(directory, meta.id)  # raises SessionInUse
        try:
            self._fd = self._open()
        except BaseException:
            self._session_lock.release()
            raise

    @property
    def id(self) -> str:
        return self._meta.id

    @property
    def meta(self) -> SessionMeta:
        return self._meta

    @property
    def conversation_path(self) -> Path:
        return self.path / CONVERSATION_FILE

    @property
    def closed(self) -> bool:
        return self._fd is None

    def append(self, message: Message) -> None:
        """Write ``message`` as one line before returning (its ``fsync``
        follows in the background). The first user prompt is recorded in
        ``meta.json`` once."""
        line = self._scrubbed(_encode(message))
        with self._lock:
            self._write(line)
            if self._meta.first_prompt is None and _is_prompt(message):
                text = self._text(prompt_text(message).strip())
                if text:
                    self._set_meta(self._meta.touched(first_prompt=text[:PROMPT_KEEP_CHARS]))

    def append_marker(self, kind: str, data: Mapping[str, Any] | None = None) -> None:
        """Write a ``{"type": kind, ...}`` marker line (see ``_files``)."""
        line = self._scrubbed(encode_marker(kind, data))
        with self._lock:
            self._write(line)

    def append_compaction(
        self, messages: Sequence[Message], data: Mapping[str, Any] | None = None
    ) -> None:
        """Record a compaction without losing history: a ``compact`` marker
        (``{"type": "compact", "messages": n, ...data}``) followed by the ``n``
        messages the conversation now consists of, in one write and one
        ``fsync``. Loading starts at the last such marker that is complete,
        so a crash in the middle of this write leaves the previous state."""
        record = {**(data or {}), "messages": len(messages)}
        lines = [encode_marker(COMPACT_MARKER, record), *(_encode(m) for m in messages)]
        payload = b"".join(self._scrubbed(line) for line in lines)
        with self._lock:
            self._write(payload)
            self._set_meta(self._meta.touched())

    def replace(self, messages: Sequence[Message]) -> None:
        """Rewrite the conversation as ``messages`` (compaction), atomically:
        a crash leaves either the old file or the new one."""
        data = b"".join(self._scrubbed(_encode(m)) for m in messages)
        with self._lock:
            fd = self._require_open()
            try:
                atomic_write(self.conversation_path, data)
                new_fd = self._open()
            except OSError as exc:
                raise SessionError(f"cannot rewrite session {self.id}: {exc.strerror}") from None
            self._flush()  # the old descriptor's fsync, before its number is freed
            os.close(fd)  # it points at the replaced file
            self._fd = new_fd
            self._set_meta(self._meta.touched())

    def close(self) -> None:
        """Wait for the pending ``fsync``, close the file; later appends raise
        ``SessionError``."""
        with self._lock:
            try:
                if self._fd is not None:
                    self._syncer.stop()
            except OSError as exc:
                raise SessionError(f"cannot write session {self.id}: {exc.strerror}") from None
            finally:
                if self._fd is not None:
                    os.close(self._fd)
                    self._fd = None
                self._session_lock.release()

    def set_first_prompt(self, text: str | None) -> None:
        """Record the first prompt in ``meta.json`` (a fork keeps its origin's)."""
        if text:
            with self._lock:
                text = self._text(text)
                self._set_meta(self._meta.touched(first_prompt=text[:PROMPT_KEEP_CHARS]))

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<SessionWriter {self.id} {state}>"

    def _text(self, text: str) -> str:
        return self._redact(text) if self._redact is not None else text

    def _scrubbed(self, line: bytes) -> bytes:
        """``line`` (one JSON record) with every string in it redacted."""
        if self._redact is None:
            return line
        text = line.decode("utf-8", "surrogatepass")
        if self._redact(text) == text:
            return line
        # the strings one by one: a placeholder never lands inside JSON syntax
        record = json.loads(text)
        scrubbed = _redact_strings(record, self._redact)
        return (
            json.dumps(scrubbed, ensure_ascii=False, separators=(",", ":")).encode(
                "utf-8", "surrogatepass"
            )
            + b"\n"
        )

    def _open(self) -> int:
        try:
            # never through a link: the conversation would be appended elsewhere
            fd = open_regular(self.conversation_path, _APPEND_FLAGS)
        except OSError as exc:
            raise SessionError(f"cannot open session {self.id}: {exc.strerror}") from None
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                # A crash cut the last line: end it, so the next line stands alone.
                write_all(fd, b"\n")
                os.fsync(fd)
        except OSError as exc:
            os.close(fd)
            raise SessionError(f"cannot open session {self.id}: {exc.strerror}") from None
        return fd

    def _write(self, line: bytes) -> None:
        fd = self._require_open()
        try:
            write_all(fd, line)
            self._syncer.request(fd)
        except OSError as exc:
            raise SessionError(f"cannot write session {self.id}: {exc.strerror}") from None

    def _flush(self) -> None:
        try:
            self._syncer.flush()
        except OSError as exc:
            raise SessionError(f"cannot write session {self.id}: {exc.strerror}") from None

    def _require_open(self) -> int:
        if self._fd is None:
            raise SessionError(f"session {self.id} is closed")
        return self._fd

    def _set_meta(self, meta: SessionMeta) -> None:
        try:
            write_meta(self.path, meta)
        except OSError as exc:
            raise SessionError(f"cannot write meta of session {self.id}: {exc.strerror}") from None
        self._meta = meta


class SessionStore:
    """Creating, reopening and resuming the sessions of a project root.

    Sessions live in ``<root>/.mewcode/sessions/<id>/``; a ``.mewcode`` or
    ``sessions`` that is a symlink is refused (``SessionError`` naming it).
    """

    @staticmethod
    def create(
        root: Path,
        provider: str | None,
        model: str | None,
        *,
        redact: Redact | None = None,
        notebook: str | None = None,
    ) -> SessionWriter:
        """Start a new, empty session and return its writer (see
        ``SessionWriter`` for ``redact``); ``notebook``: the one it serves."""
        session_id, directory = claim_session_dir(prepare_sessions_dir(root))
        meta = SessionMeta.new(session_id, provider=provider, model=model, notebook=notebook)
        try:
            write_meta(directory, meta)
        except OSError as exc:
            raise SessionError(
                f"cannot write meta of session {session_id}: {exc.strerror}"
            ) from None
        writer = SessionWriter(directory, meta, redact=redact)
        fsync_dir(directory)
        return writer

    @staticmethod
    def open(root: Path, session_id: str, *, redact: Redact | None = None) -> SessionWriter:
        """Reopen a stored session (a unique id prefix is enough) for appending.
        A partial last line is terminated first; missing meta is rebuilt."""
        sid = resolve_session_id(root, session_id)
        directory = sessions_dir(root) / sid
        check_mine(directory, sid)
        meta = read_meta(directory)
        if meta is None or meta.first_prompt is None:
            meta = meta or SessionMeta.guessed(sid)
            prompt = first_prompt_in(directory / CONVERSATION_FILE)
            meta = meta.touched(first_prompt=prompt) if prompt else meta.touched()
            try:
                write_meta(directory, meta)
            except OSError as exc:
                raise SessionError(f"cannot write meta of session {sid}: {exc.strerror}") from None
        return SessionWriter(directory, meta)

    @staticmethod
    def fork(
        root: Path,
        session_id: str,
        *,
        provider: str | None,
        model: str | None,
        redact: Redact | None = None,
    ) -> tuple[LoadedSession, SessionWriter]:
        """A new session continuing a copy of ``session_id``'s conversation
        (readable even while another process writes it). The copy is recorded
        behind a ``compact`` marker saying where it came from."""
        loaded = load_session(root, session_id)
        writer = SessionStore.create(root, provider=provider, model=model, redact=redact)
        try:
            writer.append_compaction(loaded.messages, {"trigger": "fork", "forked_from": loaded.id})
            writer.set_first_prompt(loaded.meta.first_prompt)
        except BaseException:
            writer.close()
            raise
        return loaded, writer

    @staticmethod
    def resume(
        root: Path, session_id: str, *, redact: Redact | None = None
    ) -> tuple[LoadedSession, SessionWriter]:
        """Load a session and reopen it; the messages that closed dangling tool
        calls (``loaded.unsaved``) are written at once, so disk and memory agree.
        After a compaction cut short by a crash, the loaded conversation is
        recorded afresh behind a new ``compact`` marker."""
        loaded = load_session(root, session_id)
        writer = SessionStore.open(root, loaded.id, redact=redact)
        if loaded.broken_compaction or loaded.repaired:
            # mended before its end: the log cannot be fixed by appending
            writer.append_compaction(loaded.messages, {"trigger": "repair"})
            return loaded, writer
        for message in loaded.unsaved:
            writer.append(message)
        return loaded, writer


def _redact_strings(value: Any, redact: Redact) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redact_strings(v, redact) for v in value]
    if isinstance(value, dict):
        return {k: _redact_strings(v, redact) for k, v in value.items()}
    return value


def _is_prompt(message: Message) -> bool:
    return message.role == "user" and "compact" not in message.meta


def _encode(message: Message) -> bytes:
    try:
        return encode_message(message)
    except ValueError as exc:  # pydantic's serialisation error: meta not JSON-able
        raise SessionError(f"cannot store message: {exc}") from None
