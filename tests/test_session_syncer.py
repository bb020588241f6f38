"""A session's appends are written before they return and fsynced off the
turn's path: an append returns while its fsync is still running, a killed
process loses nothing appended, close (and a compaction's rewrite) waits for
the pending fsync of the very descriptor written (never a closed and reused
number), and a failed fsync surfaces as a SessionError."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mewcode_kernel.core.errors import SessionError
from mewcode_kernel.core.messages import Message, TextBlock
from mewcode_kernel.core.session import SessionStore
from mewcode_kernel.core.session import syncer as syncer_module

REPO = Path(__file__).resolve().parent.parent


def message(text: str) -> Message:
    return Message(role="user", content=[TextBlock(text=text)])


class HeldFsync:
    """``os.fsync`` for the syncer's thread, held until released; records the
    inode each call reached."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.inodes: list[int] = []
        self.fail: OSError | None = None

    def __call__(self, fd: int) -> None:
        self.inodes.append(os.fstat(fd).st_ino)  # raises if the number was closed
        self.entered.set()
        assert self.release.wait(30)
        if self.fail is not None:
            raise self.fail


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> HeldFsync:
    fsync = HeldFsync()
    monkeypatch.setattr(syncer_module, "fsync", fsync)
    return fsync


def lines(path: Path) -> list[str]:
    return [json.loads(x)["content"][0]["text"] for x in path.read_text().splitlines()]


def test_an_append_returns_while_its_fsync_runs_and_close_waits(
    tmp_path: Path, held: HeldFsync
) -> None:
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    writer.append(message("one"))  # returns although its fsync is held
    assert held.entered.wait(30)
    assert lines(writer.conversation_path) == ["one"]  # written: the kernel has it
    writer.append(message("two"))
    closing = threading.Thread(target=writer.close)
    closing.start()
    assert closing.is_alive() and not writer.closed  # waiting for the held fsync
    held.release.set()
    closing.join(30)
    assert writer.closed and lines(writer.conversation_path) == ["one", "two"]
    inode = writer.conversation_path.stat().st_ino
    assert held.inodes and set(held.inodes) == {inode}


def test_a_rewrite_syncs_the_old_descriptor_before_freeing_its_number(
    tmp_path: Path, held: HeldFsync
) -> None:
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    old = writer.conversation_path.stat().st_ino
    writer.append(message("before"))
    assert held.entered.wait(30)
    rewriting = threading.Thread(target=writer.replace, args=([message("summary")],))
    rewriting.start()
    assert rewriting.is_alive()  # the replace waits for the old descriptor's fsync
    held.release.set()
    rewriting.join(30)
    writer.append(message("after"))
    writer.close()
    assert lines(writer.conversation_path) == ["summary", "after"]
    new = writer.conversation_path.stat().st_ino
    assert held.inodes[0] == old and set(held.inodes[1:]) <= {new}


def test_a_failed_fsync_is_a_session_error(tmp_path: Path, held: HeldFsync) -> None:
    held.fail = OSError(errno.EIO, "Input/output error")
    held.release.set()
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    writer.append(message("one"))
    with pytest.raises(SessionError, match="Input/output error"):
        writer.close()  # said at the latest when the session closes
    assert writer.closed


CHILD = """
import os, signal, sys
from pathlib import Path
from mewcode_kernel.core.messages import Message, TextBlock
from mewcode_kernel.core.session import SessionStore
writer = SessionStore.create(Path(sys.argv[1]), "anthropic", "m")
for i in range(50):
    writer.append(Message(role="user", content=[TextBlock(text=f"m{i}")]))
print(writer.conversation_path, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no close, no exit handlers
"""


def test_a_killed_process_loses_nothing_it_appended(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == -9, proc.stderr
    path = Path(proc.stdout.strip())
    assert lines(path) == [f"m{i}" for i in range(50)]
