"""grep: output modes, caps, bad input, and the two engines (ripgrep and pure
Python) giving the same results on the same tree."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.tools import RunContext, grep
from mewcode_kernel.core.tools.grep_tool import run_grep

from ._ignore_tree import build

needs_rg = pytest.mark.skipif(
    shutil.which("rg") is None, reason="needs ripgrep: apt-get install -y ripgrep"
)


@pytest.fixture
def ctx(tmp_path: Path) -> RunContext:
    return RunContext(root=tmp_path)


async def run(ctx: RunContext, **args: object) -> str:
    return await grep.call(ctx, dict(args))


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.fixture
def small(ctx: RunContext) -> RunContext:
    write(ctx.root, "b.py", "import os\nx = 1\ndef main():\n    os.exit(0)\n")
    write(ctx.root, "a/c.py", "def helper():\n    pass\n\n\n\ndef main():\n    helper()\n")
    write(ctx.root, "notes.md", "# main points\n")
    write(ctx.root, "skip.log", "def main(): ignored\n")
    write(ctx.root, ".gitignore", "*.log\n")
    (ctx.root / "blob.bin").write_bytes(b"def main\0")
    return ctx


async def test_files_with_matches_sorted_by_path(small: RunContext) -> None:
    assert await run(small, pattern="main") == "Found 3 files\na/c.py\nb.py\nnotes.md"


async def test_content_mode(small: RunContext) -> None:
    out = await run(small, pattern=r"def \w+\(", output_mode="content")
    assert out == "a/c.py:1:def helper():\na/c.py:6:def main():\nb.py:3:def main():"


async def test_content_with_context_draws_separators(small: RunContext) -> None:
    out = await run(small, pattern="def main", output_mode="content", context=1, glob="*.py")
    assert out.splitlines() == [
        "a/c.py-5-",
        "a/c.py:6:def main():",
        "a/c.py-7-    helper()",
        "--",
        "b.py-2-x = 1",
        "b.py:3:def main():",
        "b.py-4-    os.exit(0)",
    ]


async def test_count_mode(small: RunContext) -> None:
    out = await run(small, pattern="main|helper", output_mode="count")
    assert out == "a/c.py:3\nb.py:1\nnotes.md:1\n\nFound 5 matching lines in 3 files"


async def test_case_glob_path_and_single_file(small: RunContext) -> None:
    assert await run(small, pattern="IMPORT", case_insensitive=True) == "Found 1 file\nb.py"
    assert await run(small, pattern="IMPORT") == "No matches found."
    assert await run(small, pattern="main", glob="*.md") == "Found 1 file\nnotes.md"
    assert await run(small, pattern="main", glob="!*.md") == "Found 2 files\na/c.py\nb.py"
    assert await run(small, pattern="main", path="a") == "Found 1 file\na/c.py"
    out = await run(small, pattern="pass", path="a/c.py", output_mode="content")
    assert out == "a/c.py:2:    pass"
    # a file named explicitly is searched even if .gitignore excludes it
    assert await run(small, pattern="main", path="skip.log") == "Found 1 file\nskip.log"


async def test_head_limit_and_default_caps(ctx: RunContext) -> None:
    for i in range(250):
        write(ctx.root, f"f{i:03}.txt", "needle\n" * 3)
    out = await run(ctx, pattern="needle")
    assert out.startswith("Found 250 files\nf000.txt\n")
    assert "showing the first 200 of 250 files" in out and "f200.txt" not in out
    out = await run(ctx, pattern="needle", output_mode="content", head_limit=4)
    assert out.splitlines()[:4] == [
        "f000.txt:1:needle",
        "f000.txt:2:needle",
        "f000.txt:3:needle",
        "f001.txt:1:needle",
    ]
    assert "showing 4 of 750 lines" in out


async def test_python_only_syntax_and_long_lines(small: RunContext) -> None:
    assert await run(small, pattern=r"def (?=main)") == "Found 2 files\na/c.py\nb.py"
    assert (
        await run(small, pattern=r"(o)s\.\w+\(\d\)", output_mode="count")
        == "b.py:1\n\nFound 1 matching line in 1 file"
    )
    write(small.root, "wide.js", "var a='" + "z" * 2000 + "';\n")
    out = await run(small, pattern="var a", output_mode="content")
    assert out.startswith("wide.js:1:var a='zzz") and out.endswith("… [2009 chars]")


async def test_bad_input(small: RunContext) -> None:
    with pytest.raises(ToolError, match="invalid regular expression '\\(unclosed'"):
        await run(small, pattern="(unclosed")
    with pytest.raises(ToolError, match="path not found: nope"):
        await run(small, pattern="x", path="nope")
    with pytest.raises(ToolError, match="invalid glob"):
        await run(small, pattern="x", glob="[a")
    with pytest.raises(ToolError, match="output_mode"):
        await run(small, pattern="x", output_mode="lines")
    with pytest.raises(ToolError, match="pattern is empty"):
        await run(small, pattern="")
    assert "\\n never matches" in await run(small, pattern="x = 1\\ndef")


# -- the two engines ----------------------------------------------------------

QUERIES: list[dict[str, Any]] = [
    {"pattern": "hello"},
    {"pattern": "hello", "output_mode": "content", "context": 1},
    {"pattern": "hello", "output_mode": "content", "context": 3, "path": "src"},
    {"pattern": r"h\w+o", "output_mode": "count"},
    {"pattern": "HELLO", "case_insensitive": True, "output_mode": "count"},
    {"pattern": "^import", "output_mode": "content"},
    {"pattern": "x$", "output_mode": "content"},
    {"pattern": "z*", "output_mode": "count"},
    {"pattern": r"\s+foo", "output_mode": "content"},
    {"pattern": r"end\s*$", "output_mode": "content"},
    {"pattern": r"\Ahello", "output_mode": "count"},
    {"pattern": "(?i)hello world", "output_mode": "count"},
    {"pattern": r"\w+ hello\b", "output_mode": "content"},
    {"pattern": "hello", "path": "sub"},
    {"pattern": "hello", "path": "sub", "glob": "inner/*"},
    {"pattern": "hello", "path": "a/b"},
    {"pattern": "hello", "glob": "*.txt"},
    {"pattern": "hello", "glob": "!*.txt"},
    {"pattern": "hello", "glob": "sub/*"},
    {"pattern": "hello", "glob": "src/**"},
    {"pattern": "hello", "glob": "*.{py,tsx}"},
    {"pattern": "hello", "glob": "**/*.log"},
    {"pattern": "hello", "glob": "!src/"},
]


@needs_rg
@pytest.mark.parametrize("as_repo", [False, True], ids=["plain-dir", "git-repo"])
async def test_engines_agree(ctx: RunContext, as_repo: bool) -> None:
    build(ctx.root)
    if as_repo:
        (ctx.root / ".git").mkdir()
        (ctx.root / ".git" / "HEAD").write_text("hello\n")
    for query in QUERIES:
        with_rg = await run_grep(ctx, use_rg=True, **query)
        pure = await run_grep(ctx, use_rg=False, **query)
        assert with_rg.engine == "rg" and pure.engine == "python"
        assert with_rg.counts == pure.counts, query
        assert with_rg.lines == pure.lines, query
    everything = await run_grep(ctx, "hello", use_rg=False)
    assert "keep.log" in everything.counts and "drop.log" not in everything.counts
    assert "bin.dat" not in everything.counts and "src/image.png" not in everything.counts
    assert not any(p.startswith(".git/") for p in everything.counts)


@needs_rg
async def test_engines_agree_below_a_repo_top(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.gen\n")
    project = tmp_path / "project"
    project.mkdir()
    build(project)
    (project / "x.gen").write_text("hello\n")
    ctx = RunContext(root=project)
    for query in QUERIES[:3]:
        with_rg = await run_grep(ctx, use_rg=True, **query)
        pure = await run_grep(ctx, use_rg=False, **query)
        assert with_rg.counts == pure.counts and with_rg.lines == pure.lines, query
    assert "x.gen" not in pure.counts


@needs_rg
async def test_rg_falls_back_to_python_for_syntax_it_lacks(small: RunContext) -> None:
    for pattern in (r"(d)\1*ef main", r"def (?=main)", r"(?<=def )main"):
        result = await run_grep(small, pattern, use_rg=None)
        assert result.engine == "python" and set(result.counts) == {"a/c.py", "b.py"}, pattern
    # Python reads this as the set "[[:alph" then "]ain"; ripgrep would not
    for _ in range(2):  # the second time re's cache must not hide the warning
        result = await run_grep(small, "[[:alpha:]]ain", use_rg=None)
        assert result.engine == "python" and result.counts == {}
    assert (await run_grep(small, "main")).engine == "rg"


async def test_python_engine_line_semantics(ctx: RunContext) -> None:
    write(ctx.root, "t.txt", "alpha\nbeta\n\ngamma")
    result = await run_grep(ctx, "^$|a$", output_mode="content", use_rg=False)
    assert result.lines == {
        "t.txt": [(1, True, "alpha"), (2, True, "beta"), (3, True, ""), (4, True, "gamma")]
    }
    result = await run_grep(ctx, r"a\s+b", output_mode="count", use_rg=False)
    assert result.counts == {}  # never across lines
    result = await run_grep(ctx, "", output_mode="count", use_rg=False)
    assert result.counts == {"t.txt": 4}


def naive_counts(root: Path, pattern: str, ignore_case: bool) -> dict[str, int]:
    """Reference: every line of every searchable file, matched on its own."""
    rx = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    counts = {}
    for rel in ("a.txt", "b.txt", "c.txt"):
        data = (root / rel).read_bytes()
        lines = data.decode("utf-8", "replace").split("\n")
        if data.endswith(b"\n"):
            lines.pop()
        hits = sum(1 for line in lines if rx.search(line))
        if hits:
            counts[rel] = hits
    return counts


@pytest.mark.parametrize(
    ("pattern", "ignore_case"),
    [
        ("kiss", True),  # K (Kelvin sign), ſ (long s) and İ/ı fold to ASCII
        ("KISS", True),
        ("todo", True),
        ("Straße", True),
        ("error", False),
        (r"\w+Error", False),
        (r"raise \w+", False),
        (r"(?<=x)y", False),
        (r"y(?=\n)", False),
        (r"foo\s+bar", False),
        (r"\A\w+\Z", False),
        (r"\Ax", False),
        ("é", False),
        ("", False),
    ],
)
async def test_python_engine_matches_a_naive_line_scan(
    ctx: RunContext, pattern: str, ignore_case: bool
) -> None:
    write(ctx.root, "a.txt", "\u212aİSS here\nki\u017fs\nnothing\nTODO: x\nxy\nfoo\n  bar\n")
    write(ctx.root, "b.txt", "raise ValueError\nan error\nerror error\nSTRASSE straße\n")
    (ctx.root / "c.txt").write_bytes(b"caf\xc3\xa9 \xff kiss\r\nxy\nlast error")
    for mode in ("count", "content"):
        result = await run_grep(
            ctx, pattern, case_insensitive=ignore_case, output_mode=mode, use_rg=False
        )
        assert result.counts == naive_counts(ctx.root, pattern, ignore_case), (pattern, mode)


@pytest.mark.parametrize(
    "use_rg", [False, pytest.param(True, marks=needs_rg)], ids=["python", "rg"]
)
async def test_never_searches_the_agents_own_files(ctx: RunContext, use_rg: bool) -> None:
    """A grep from the root must not return past conversations from the session logs."""
    write(ctx.root, "app.py", "secret_plan = 1\n")
    write(ctx.root, ".mewcode/sessions/s1/conversation.jsonl", '{"text": "secret_plan"}\n')
    write(ctx.root, "sub/.mewcode/settings.local.yaml", "secret_plan: 2\n")
    write(ctx.root, ".git/config", "secret_plan = 3\n")
    result = await run_grep(ctx, "secret_plan", use_rg=use_rg)
    assert set(result.counts) == {"app.py"}
    # asked for explicitly, the folder itself is searched
    inside = await run_grep(ctx, "secret_plan", path=".mewcode", use_rg=use_rg)
    assert len(inside.counts) == 1 and next(iter(inside.counts)).endswith("conversation.jsonl")


@pytest.mark.parametrize("use_rg", [False, pytest.param(True, marks=needs_rg)])
async def test_hard_linked_files_are_left_out(tmp_path: Path, use_rg: bool) -> None:
    """A file with other hard links may be one that lives outside the project."""
    from mewcode_kernel.core.tools.grep_tool import grep_text

    root, outside = tmp_path / "proj", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("password=hunter2\n")
    (root / "copy.txt").hardlink_to(outside / "secret.txt")
    (root / "mine.txt").write_text("password=mine\n")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    ctx = RunContext(root=root)
    out = await grep_text(ctx, "password", output_mode="content", use_rg=use_rg)
    assert "hunter2" not in out and "password=mine" in out
    assert "1 matching file(s) with other hard links were left out" in out
