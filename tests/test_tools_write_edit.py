"""write_file and edit_file: outcomes on disk, atomic replacement, helpful misses."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.tools import RunContext, edit_file, write_file


@pytest.fixture
def ctx(tmp_path: Path) -> RunContext:
    return RunContext(root=tmp_path)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


# -- write_file ---------------------------------------------------------------


async def test_write_creates_parents_and_reports(ctx: RunContext) -> None:
    out = await write_file.call(ctx, {"path": "a/b/c.txt", "content": "one\ntwo\n"})
    assert out == "Created a/b/c.txt (2 lines, 8 bytes)."
    target = ctx.root / "a" / "b" / "c.txt"
    assert target.read_text() == "one\ntwo\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()
    assert [p.name for p in target.parent.iterdir()] == ["c.txt"]  # no temp file left


async def test_overwrite_keeps_mode_and_replaces_atomically(ctx: RunContext) -> None:
    target = ctx.root / "run.sh"
    target.write_text("echo old\n")
    target.chmod(0o750)
    os.link(target, ctx.root / "old-link")
    out = await write_file.call(ctx, {"path": "run.sh", "content": "echo new\nexit 0"})
    assert out == "Overwrote run.sh (2 lines, 15 bytes; it had 1 line)."
    assert target.read_text() == "echo new\nexit 0"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    # a new inode was renamed into place; the old one is untouched
    assert (ctx.root / "old-link").read_text() == "echo old\n"


async def test_write_refuses_directories_and_file_parents(ctx: RunContext) -> None:
    (ctx.root / "d").mkdir()
    (ctx.root / "f").write_text("x")
    with pytest.raises(ToolError, match="is a directory"):
        await write_file.call(ctx, {"path": "d", "content": "x"})
    with pytest.raises(ToolError, match="is a file, not a directory"):
        await write_file.call(ctx, {"path": "f/inner.txt", "content": "x"})
    with pytest.raises(ToolError, match="invalid arguments for write_file: content"):
        await write_file.call(ctx, {"path": "x.txt"})


# -- edit_file ----------------------------------------------------------------

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


async def edit(ctx: RunContext, **args: object) -> str:
    return await edit_file.call(ctx, {"path": "m.py", **args})


async def test_single_replacement_shows_snippet(ctx: RunContext) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    out = await edit(ctx, old_string="    return 2", new_string="    return 20")
    assert (ctx.root / "m.py").read_text() == SOURCE.replace("return 2", "return 20")
    assert out.startswith("Edited m.py: replaced 1 occurrence.")
    assert "     6\t    return 20" in out and "     3\t" in out


async def test_ambiguous_match_lists_lines(ctx: RunContext) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=r"occurs 2 times in m.py \(at lines 2, 6\).*replace_all"):
        await edit(ctx, old_string="    return", new_string="    yield")
    assert (ctx.root / "m.py").read_text() == SOURCE


async def test_replace_all(ctx: RunContext) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    out = await edit(ctx, old_string="return", new_string="yield", replace_all=True)
    assert (ctx.root / "m.py").read_text() == SOURCE.replace("return", "yield")
    assert "replaced 2 occurrences (now at lines 2, 6)" in out


async def test_whitespace_mismatch_points_at_the_lines(ctx: RunContext) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError) as exc:
        await edit(ctx, old_string="def g():\n  return 2", new_string="x")
    msg = str(exc.value)
    assert "Lines 5-6 match except for whitespace or indentation" in msg
    assert "     6\t    return 2" in msg


async def test_near_miss_shows_closest_text(ctx: RunContext) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=r"closest text is at line 5:\n     5\tdef g\(\):"):
        await edit(ctx, old_string="def gg():\n    return 2", new_string="x")
    with pytest.raises(ToolError, match=r"not found in m.py. Read the file again"):
        await edit(ctx, old_string="completely unrelated", new_string="x")


async def test_line_number_prefixes_are_diagnosed(ctx: RunContext) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match="line-number prefixes"):
        await edit(ctx, old_string="     2\t    return 1", new_string="x")


async def test_identical_strings_are_refused(ctx: RunContext) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match="identical"):
        await edit(ctx, old_string="f", new_string="f")


async def test_empty_old_string_creates_a_file(ctx: RunContext) -> None:
    out = await edit_file.call(ctx, {"path": "new/x.py", "old_string": "", "new_string": "a = 1\n"})
    assert (ctx.root / "new" / "x.py").read_text() == "a = 1\n"
    assert out.startswith("Created new/x.py.") and "     1\ta = 1" in out
    with pytest.raises(ToolError, match="already has content"):
        await edit_file.call(ctx, {"path": "new/x.py", "old_string": "", "new_string": "b"})


async def test_missing_file(ctx: RunContext) -> None:
    with pytest.raises(ToolError, match=r"file not found: m.py.*write_file"):
        await edit(ctx, old_string="a", new_string="b")


async def test_crlf_file_matches_lf_old_string(ctx: RunContext) -> None:
    (ctx.root / "m.py").write_bytes(b"a = 1\r\nb = 2\r\nc = 3\r\n")
    await edit(ctx, old_string="a = 1\nb = 2", new_string="a = 10\nb = 20")
    assert (ctx.root / "m.py").read_bytes() == b"a = 10\r\nb = 20\r\nc = 3\r\n"


async def test_edit_keeps_mode_and_refuses_binary(ctx: RunContext) -> None:
    target = ctx.root / "m.py"
    target.write_text(SOURCE)
    target.chmod(0o700)
    await edit(ctx, old_string="return 1", new_string="return 3")
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    (ctx.root / "b.bin").write_bytes(b"ab\0cd")
    with pytest.raises(ToolError, match=r"b.bin is a binary file"):
        await edit_file.call(ctx, {"path": "b.bin", "old_string": "ab", "new_string": "x"})
