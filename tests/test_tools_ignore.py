"""The .gitignore matcher and glob translation, checked rule by rule and
against git itself on a tree of corner cases."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mewcode_kernel.core.tools.search.globpat import GlobError, expand_braces, translate
from mewcode_kernel.core.tools.search.ignore import SearchScope, parse_gitignore, walk_files

from ._ignore_tree import build, git_visible


def decide(rules: str, path: str, is_dir: bool = False) -> bool | None:
    f = parse_gitignore(rules)
    return None if f is None else f.decide(path, is_dir)


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "expected"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/down/a.log", False, True),
        ("*.log\n!keep.log", "keep.log", False, False),
        ("*.log\n!keep.log", "x/keep.log", False, False),
        ("!keep.log\n*.log", "keep.log", False, True),  # the last matching line wins
        ("/build", "build", True, True),
        ("/build", "src/build", True, None),  # anchored to the .gitignore's directory
        ("build/", "build", False, None),  # dir-only does not match a file
        ("build/", "src/build", True, True),
        ("docs/*.md", "docs/a.md", False, True),
        ("docs/*.md", "docs/x/a.md", False, None),  # a middle slash anchors, * stops at /
        ("**/cache", "a/b/cache", True, True),
        ("**/cache", "cache", True, True),
        ("a/**/z", "a/z", False, True),
        ("a/**/z", "a/b/c/z", False, True),
        ("a/**", "a/b/c", False, True),
        ("a/**", "a", True, None),
        ("foo**bar", "fooXbar", False, True),  # other ** act like *
        ("foo**bar", "foo/bar", False, None),
        ("temp?.txt", "temp1.txt", False, True),
        ("temp?.txt", "temp12.txt", False, None),
        ("[abc]x", "bx", False, True),
        ("[abc]x", "dx", False, None),
        ("[!abc]x", "dx", False, True),
        ("[^abc]x", "ax", False, None),
        ("[a-c]x", "cx", False, True),
        ("[]]x", "]x", False, True),
        ("[[:digit:]]x", "7x", False, True),
        ("[[:digit:]]x", "ax", False, None),
        ("a[/]b", "a/b", False, None),  # a class never matches /
        ("\\#x", "#x", False, True),
        ("\\!x", "!x", False, True),
        ("\\*", "*", False, True),
        ("\\*", "a", False, None),
        ("x\\ ", "x ", False, True),
        ("x   ", "x", False, True),
        ("x   ", "x ", False, None),
    ],
)
def test_gitignore_rules(rules: str, path: str, is_dir: bool, expected: bool | None) -> None:
    assert decide(rules, path, is_dir) is expected


def test_comments_blank_and_malformed_lines_are_skipped() -> None:
    assert parse_gitignore("# only a comment\n\n   \n") is None
    f = parse_gitignore("[unclosed\ntrailing\\\n*.tmp\n")
    assert f is not None
    assert f.decide("[unclosed", False) is None
    assert f.decide("a.tmp", False) is True


def test_translate_and_braces() -> None:
    assert expand_braces("*.{ts,tsx}") == ["*.ts", "*.tsx"]
    assert sorted(expand_braces("{a,b{c,d}}/x")) == ["a/x", "bc/x", "bd/x"]
    assert expand_braces("{solo") == ["{solo"]
    assert expand_braces("\\{a,b}") == ["\\{a,b}"]
    with pytest.raises(GlobError):
        expand_braces("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}", limit=64)
    with pytest.raises(GlobError):
        translate("[abc")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git: apt-get install -y git")
@pytest.mark.parametrize("as_repo", [False, True])
def test_walk_agrees_with_git(tmp_path: Path, as_repo: bool) -> None:
    root = build(tmp_path)
    if as_repo:
        expected = git_visible(root)
        ours = {rel for rel, _ in walk_files(SearchScope.for_dir(root, root))}
    else:
        ours = {rel for rel, _ in walk_files(SearchScope.for_dir(root, root))}
        expected = git_visible(root)  # creates .git only after our walk
    assert ours == expected
    assert "keep.log" in ours and "drop.log" not in ours
    assert "deep/keep/f.txt" not in ours  # a dir re-included, its files still match deep/**
    assert "sub/x.log" in ours and "sub/t.txt" not in ours and "sub/inner/t.txt" in ours


def test_search_below_root_applies_ancestor_rules(tmp_path: Path) -> None:
    root = build(tmp_path)
    scope = SearchScope.for_dir(root / "sub", root)
    found = {rel for rel, _ in walk_files(scope)}
    assert found == {
        ".gitignore",
        "x.log",
        "important.txt",
        "deeper/only_here.md",
        "inner/.gitignore",
        "inner/t.txt",
        "inner/u.py",
    }
    check = scope.checker()
    assert check("t.txt") and check("only_here.md") and not check("inner/t.txt")


def test_git_top_above_root_and_nested_repo(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.gen\nignored_dir/\n")
    project = tmp_path / "ignored_dir" / "project"
    (project / "nested" / ".git").mkdir(parents=True)
    for rel in ("a.gen", "b.py", "nested/c.gen"):
        (project / rel).write_text("x\n")
    found = {rel for rel, _ in walk_files(SearchScope.for_dir(project, project))}
    # the repository's rules reach into the project, but the searched directory
    # itself is never ignored, and a nested repository starts afresh
    assert found == {"b.py", "nested/c.gen"}
