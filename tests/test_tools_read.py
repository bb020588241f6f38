"""read_file: numbering, paging, caps, and the files it refuses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.tools import RunContext, read_file
from mewcode_kernel.core.tools.read_tool import MAX_OUTPUT_CHARS


@pytest.fixture
def ctx(tmp_path: Path) -> RunContext:
    return RunContext(root=tmp_path)


async def read(ctx: RunContext, **args: object) -> str:
    return await read_file.call(ctx, dict(args))


async def test_numbers_lines_like_cat_n(ctx: RunContext) -> None:
    (ctx.root / "a.py").write_text("import os\n\n    x = 1\n")
    assert await read(ctx, path="a.py") == "     1\timport os\n     2\t\n     3\t    x = 1"


async def test_offset_and_limit_page_through_with_a_note(ctx: RunContext) -> None:
    (ctx.root / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = await read(ctx, path="n.txt", offset=4, limit=3)
    assert out.splitlines()[:3] == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert "lines 4-6 of 10" in out and "offset=7" in out
    assert (await read(ctx, path="n.txt", offset=9)).splitlines() == [
        "     9\tline 9",
        "    10\tline 10",
    ]
    assert (await read(ctx, path="n.txt", offset=0, limit=1)).startswith("     1\tline 1\n")


async def test_default_limit_is_2000_lines(ctx: RunContext) -> None:
    (ctx.root / "big.txt").write_text("x\n" * 2500)
    out = await read(ctx, path="big.txt")
    assert "  2000\tx" in out and "  2001\t" not in out
    assert "lines 1-2000 of 2500" in out and "offset=2001" in out


async def test_long_lines_are_truncated(ctx: RunContext) -> None:
    (ctx.root / "min.js").write_text("a" * 5000 + "\nshort\n")
    out = await read(ctx, path="min.js")
    first, second = out.splitlines()
    assert (
        first.startswith("     1\t" + "a" * 2000 + "…")
        and "line truncated" in first
        and "5001 bytes" in first
    )
    assert second == "     2\tshort"


async def test_output_is_capped_with_offset_to_continue(ctx: RunContext) -> None:
    (ctx.root / "wide.txt").write_text(("y" * 1500 + "\n") * 400)
    out = await read(ctx, path="wide.txt")
    assert len(out) <= MAX_OUTPUT_CHARS + 300
    assert "output capped at 256 KiB" in out
    last_shown = int(out.split("\n\n")[0].splitlines()[-1].split("\t")[0])
    assert f"offset={last_shown + 1}" in out and "of 400" in out


async def test_empty_file_says_so(ctx: RunContext) -> None:
    (ctx.root / "e.txt").write_text("")
    assert "empty" in await read(ctx, path="e.txt")


async def test_crlf_shown_without_carriage_returns(ctx: RunContext) -> None:
    (ctx.root / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    assert await read(ctx, path="w.txt") == "     1\tone\n     2\ttwo"


async def test_absolute_and_home_paths(
    ctx: RunContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "f.txt").write_text("hi\n")
    assert await read(ctx, path=str(other / "f.txt")) == "     1\thi"
    monkeypatch.setenv("HOME", str(other))
    at_home = RunContext(root=ctx.root)  # the workspace reads HOME when it is made
    assert await read(at_home, path="~/f.txt") == "     1\thi"


@pytest.mark.parametrize(
    ("content", "needle"),
    [(b"\x7fELF\x00\x00\x01", "binary"), (b"caf\xe9\n", "not UTF-8")],
)
async def test_binary_and_undecodable_files_are_refused(
    ctx: RunContext, content: bytes, needle: str
) -> None:
    (ctx.root / "blob.bin").write_bytes(content)
    with pytest.raises(ToolError, match=needle) as exc:
        await read(ctx, path="blob.bin")
    assert "blob.bin" in str(exc.value)


async def test_missing_file_suggests_similar_names(ctx: RunContext) -> None:
    (ctx.root / "config.yaml").write_text("a: 1\n")
    with pytest.raises(ToolError, match=r"not found: config.yml; did you mean config.yaml"):
        await read(ctx, path="config.yml")
    with pytest.raises(ToolError, match=r"nope/x.txt.*does not exist"):
        await read(ctx, path="nope/x.txt")


async def test_directory_points_to_glob(ctx: RunContext) -> None:
    (ctx.root / "src").mkdir()
    with pytest.raises(ToolError, match=r"is a directory.*glob"):
        await read(ctx, path="src")


async def test_pipes_are_refused_without_blocking(ctx: RunContext) -> None:
    os.mkfifo(ctx.root / "fifo")
    with pytest.raises(ToolError, match="not a regular file"):
        await read(ctx, path="fifo")


async def test_offset_past_the_end(ctx: RunContext) -> None:
    (ctx.root / "s.txt").write_text("a\nb\n")
    with pytest.raises(ToolError, match=r"offset 5 is past the end.*2 lines"):
        await read(ctx, path="s.txt", offset=5)


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"path": "a", "limit": 0},
        {"path": "a", "offset": -1},
        {"path": "a", "bogus": 1},
        {"path": ""},
    ],
)
async def test_invalid_arguments(ctx: RunContext, args: dict[str, object]) -> None:
    with pytest.raises(ToolError):
        await read_file.call(ctx, args)
