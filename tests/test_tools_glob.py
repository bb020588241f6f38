"""glob: pattern semantics, .gitignore, ordering by mtime, the result cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.tools import RunContext, glob
from mewcode_kernel.core.tools.glob_tool import MAX_RESULTS

from ._ignore_tree import build


@pytest.fixture
def ctx(tmp_path: Path) -> RunContext:
    return RunContext(root=tmp_path)


async def run(ctx: RunContext, pattern: str, **args: object) -> list[str]:
    out = await glob.call(ctx, {"pattern": pattern, **args})
    return out.splitlines()


def touch(root: Path, rel: str, mtime: float | None = None) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("x\n")
    if mtime is not None:
        os.utime(p, (mtime, mtime))


async def test_star_stays_in_one_level_and_double_star_recurses(ctx: RunContext) -> None:
    for rel in ("a.py", "src/b.py", "src/pkg/c.py", "src/pkg/d.ts", ".hidden.py"):
        touch(ctx.root, rel)
    assert set(await run(ctx, "*.py")) == {"a.py", ".hidden.py"}
    assert set(await run(ctx, "**/*.py")) == {"a.py", ".hidden.py", "src/b.py", "src/pkg/c.py"}
    assert set(await run(ctx, "src/**/*.py")) == {"src/b.py", "src/pkg/c.py"}
    assert set(await run(ctx, "src/*/*.{py,ts}")) == {"src/pkg/c.py", "src/pkg/d.ts"}
    assert set(await run(ctx, "[ab].py")) == {"a.py"}
    assert set(await run(ctx, "*.py", path="src")) == {"src/b.py"}
    assert set(await run(ctx, "./src/pkg/c.py")) == {"src/pkg/c.py"}


async def test_newest_first(ctx: RunContext) -> None:
    touch(ctx.root, "old.txt", 1_000_000)
    touch(ctx.root, "new.txt", 3_000_000)
    touch(ctx.root, "sub/mid.txt", 2_000_000)
    assert await run(ctx, "**/*.txt") == ["new.txt", "sub/mid.txt", "old.txt"]


async def test_respects_gitignore_and_skips_git(ctx: RunContext) -> None:
    build(ctx.root)
    (ctx.root / ".git").mkdir()
    (ctx.root / ".git" / "config").write_text("x")
    found = set(await run(ctx, "**/*"))
    assert "keep.log" in found and "drop.log" not in found
    assert "sub/x.log" in found and "sub/t.txt" not in found
    assert "node_modules/pkg/index.js" not in found and ".hidden/h.txt" in found
    assert not any(p.startswith(".git/") for p in found)
    assert set(await run(ctx, "**/*.log")) == {"keep.log", "sub/x.log"}


async def test_skips_the_agents_own_files(ctx: RunContext) -> None:
    for rel in (
        "a.py",
        ".mewcode/sessions/s1/conversation.jsonl",
        "pkg/.mewcode/x.py",
        ".git/y.py",
    ):
        touch(ctx.root, rel)
    assert set(await run(ctx, "**/*")) == {"a.py"}
    assert await run(ctx, "**/*.jsonl", path=".mewcode") == [
        ".mewcode/sessions/s1/conversation.jsonl"
    ]


async def test_results_are_capped_with_a_note(ctx: RunContext) -> None:
    for i in range(MAX_RESULTS + 5):
        touch(ctx.root, f"f{i:03}.txt", 1_000_000 + i)
    lines = await run(ctx, "*.txt")
    assert lines[0] == f"f{MAX_RESULTS + 4:03}.txt"
    assert len([x for x in lines if x.endswith(".txt")]) == MAX_RESULTS
    assert (
        f"showing the {MAX_RESULTS} most recently modified of {MAX_RESULTS + 5} files" in lines[-1]
    )


async def test_absolute_pattern_and_paths_outside_root(ctx: RunContext, tmp_path: Path) -> None:
    other = tmp_path / "outside"
    touch(other, "x/y.md")
    project = tmp_path / "project"
    project.mkdir()
    inner = RunContext(root=project)
    assert await run(inner, f"{other}/**/*.md") == [str(other / "x" / "y.md")]
    assert await run(inner, "**/*.md", path=str(other)) == [str(other / "x" / "y.md")]


async def test_no_match_and_bad_input(ctx: RunContext) -> None:
    touch(ctx.root, "a.txt")
    assert (await run(ctx, "*.rs")) == ["No files found matching '*.rs'."]
    with pytest.raises(ToolError, match="directory not found: nope"):
        await run(ctx, "*", path="nope")
    with pytest.raises(ToolError, match="is a file"):
        await run(ctx, "*", path="a.txt")
    with pytest.raises(ToolError, match="invalid glob pattern"):
        await run(ctx, "[oops")
    with pytest.raises(ToolError, match="pattern is empty"):
        await run(ctx, "  ")
    with pytest.raises(ToolError, match="invalid arguments for glob: pattern"):
        await glob.call(ctx, {})


async def test_never_follows_a_symlinked_directory_out_of_the_root(tmp_path: Path) -> None:
    root, outside = tmp_path / "proj", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.key").write_text("k")
    (outside / "deep" / "id_rsa").write_text("k")
    (root / "src" / "a.py").write_text("x")
    (root / "out").symlink_to(outside)  # a directory link out of the project
    (root / "src" / "key.lnk").symlink_to(outside / "secret.key")  # a file link out
    (root / "src" / "alias.py").symlink_to(root / "src" / "a.py")  # a file link inside
    ctx = RunContext(root=root)
    # through the link as the pattern's literal directory: refused, nothing listed
    for pattern in ("out/*", "out/**/*", "./out/deep/*"):
        with pytest.raises(ToolError, match="outside the project through a symbolic link"):
            await run(ctx, pattern)
    # walking the tree: the directory link is not entered, the file link out not listed
    found = set(await run(ctx, "**/*"))
    assert found == {"src/a.py", "src/alias.py"}
