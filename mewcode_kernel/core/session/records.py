"""Files that live inside a session's folder besides its conversation: a
subagent's conversation (``subagents/<task>.jsonl``, the same line format)
and the task table (``tasks.jsonl``, one JSON record a line; the last record
of an id wins). Both are appended and fsynced line by line, and read back
skipping damaged lines, so a crash loses at most the line being written.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..conversation import Conversation
from ..errors import SessionError
from ..fs.durable import write_all
from ..messages import Message
from ._files import encode_message, open_regular, read_regular, refuse_symlinks
from .load import compaction_window, read_conversation

__all__ = ["JsonLines", "TranscriptFile", "subagent_transcript", "task_table"]

SUBAGENTS_DIR = "subagents"
TASKS_FILE = "tasks.jsonl"
_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT


def _append(path: Path, line: bytes) -> None:
    # neither the file nor its folder (``subagents``) through a link
    refuse_symlinks(path.parent)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the user's alone
        fd = open_regular(path, _FLAGS)
        try:
            write_all(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise SessionError(f"cannot write {path}: {exc.strerror}") from None


class TranscriptFile:
    """A conversation kept in a JSONL file of its own."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, message: Message) -> None:
        with self._lock:
            _append(self.path, encode_message(message))

    def read(self) -> list[Message]:
        """The conversation as stored, unanswered tool calls closed."""
        refuse_symlinks(self.path.parent)
        messages, markers, _, _ = read_conversation(self.path)
        start, end = compaction_window(markers, len(messages))
        conversation = Conversation(messages[start:end])
        conversation.close_dangling()
        return conversation.messages


class JsonLines:
    """A file of JSON records, one a line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, record: Mapping[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        with self._lock:
            _append(self.path, line)

    def read(self) -> list[dict[str, Any]]:
        refuse_symlinks(self.path.parent)
        try:
            raw = read_regular(self.path)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SessionError(f"cannot read {self.path}: {exc.strerror}") from None
        records = []
        for line in raw.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
        return records


def subagent_transcript(session_dir: Path, task_id: str) -> TranscriptFile:
    return TranscriptFile(session_dir / SUBAGENTS_DIR / f"{task_id}.jsonl")


def task_table(session_dir: Path) -> JsonLines:
    return JsonLines(session_dir / TASKS_FILE)
