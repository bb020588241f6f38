"""``Sandbox.wrap(read_only=True)``: the process reads the project as usual
but changes nothing in it, nor in ``allow_write`` folders; only the private
temp directory is writable. Real bubblewrap, real files."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.core.config import SandboxSettings
from mewcode_kernel.core.sandbox import Sandbox, SandboxPolicy, bwrap_argv

from ._sandboxed import SUPPORT, needs_bwrap

WRITES = (
    "echo x > notes.txt",
    "echo x >> notes.txt",
    "rm -f notes.txt",
    "mv notes.txt moved.txt",
    "mkdir newdir",
    "touch new.txt",
    "ln -s notes.txt link",
    "ln notes.txt hard",
    "echo x > src/../made.txt",
    "echo x > /proc/self/cwd/made.txt",
    "python3 -c \"open('made.txt', 'w')\"",
    "git init -q .",
    "echo x > {extra}/made.txt",
    "cp notes.txt {extra}/",
    "echo x > .mcp.json",
)


@pytest.fixture
def dirs() -> Iterator[tuple[Path, Path]]:
    base = Path(tempfile.mkdtemp(prefix="mewcode-ro-", dir="/var/tmp"))
    root, extra = base / "proj", base / "extra"
    (root / "src").mkdir(parents=True)
    extra.mkdir()
    (root / "notes.txt").write_text("notes\n")
    (root / "src" / "a.py").write_text("print('a')\n")
    try:
        yield root, extra
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


@needs_bwrap
def test_a_read_only_process_reads_but_changes_nothing(dirs: tuple[Path, Path]) -> None:
    root, extra = dirs
    box = Sandbox(root, SandboxSettings(allow_write=(extra,)), support=SUPPORT)
    before, extra_before = _tree(root), _tree(extra)
    script = "; ".join(
        f"( {w.format(extra=extra)} ) 2>/dev/null && echo WROTE:{i}" for i, w in enumerate(WRITES)
    )
    command = f"cat notes.txt src/a.py; ls; {script}; echo t > /tmp/scratch && cat /tmp/scratch"
    done = subprocess.run(
        box.wrap(["bash", "-c", command], read_only=True),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "notes" in done.stdout and "print('a')" in done.stdout  # reads work
    assert "WROTE" not in done.stdout, done.stdout
    assert done.stdout.rstrip().endswith("t")  # the private /tmp stays writable
    assert _tree(root) == before and _tree(extra) == extra_before
    assert sorted(os.listdir(root)) == ["notes.txt", "src"]  # no stand-ins either


@needs_bwrap
def test_the_same_sandbox_still_writes_when_not_read_only(dirs: tuple[Path, Path]) -> None:
    root, extra = dirs
    box = Sandbox(root, SandboxSettings(allow_write=(extra,)), support=SUPPORT)
    done = subprocess.run(
        box.wrap(["bash", "-c", f"echo x > made.txt && echo y > {extra}/made.txt"]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (root / "made.txt").exists() and (extra / "made.txt").exists()


def test_read_only_mounts_every_writable_folder_read_only(tmp_path: Path) -> None:
    root, extra = tmp_path / "r", tmp_path / "x"
    (root / ".git").mkdir(parents=True)
    extra.mkdir()
    policy = SandboxPolicy(
        writable=(str(root), str(extra)),
        pinned=(str(root / ".git"),),
        placeholders=(str(root / ".mcp.json"),),
        read_only=True,
    )
    argv = bwrap_argv("bwrap", policy, ["true"])
    text = " ".join(argv)
    assert f"--ro-bind {root} {root}" in text and f"--ro-bind {extra} {extra}" in text
    assert "--bind " not in text.replace("--ro-bind ", "")  # nothing writable bound
    assert ".mcp.json" not in text  # no stand-ins: nothing can be created anyway
