"""What commands changed, in a git repository: a snapshot of the work tree
before a turn's first command and another when the turn ends.

``git stash create`` writes a commit of the tracked files as they are
(index and work tree) without touching either; comparing two such commits
(``git diff --raw``) names the tracked files the turn changed, and git holds
their content on both sides. New untracked files (not ignored) are found by
comparing ``git ls-files --others`` before and after. That is what is
restorable safely: a tracked regular file whose bytes git stores as they
are on disk (no line-ending conversion or filter: checked on the "after"
side against the file itself), and a new untracked file (deleted on revert
if unchanged). Symlinks, submodules, ignored files and untracked files a
command modified are not followed.

A repository's own ``.git/config`` can name programs git runs: git runs
here with ``core.fsmonitor``, hooks, automatic gc and every configured
filter driver off, and never with an external diff or text conversion
(the caller also asks the project's trust first).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..fs.safe_git import GitFailed, run_git

__all__ = ["GitChange", "GitFailed", "GitSnapshot", "changes_between", "is_repository", "snapshot"]

GIT_TIMEOUT = 20.0
_REGULAR = ("100644", "100755")
_EMPTY = "0" * 40


def _git(root: Path, *args: str) -> bytes:
    return run_git(root, args, timeout=GIT_TIMEOUT)


def is_repository(root: Path) -> bool:
    """Whether ``root`` is the top of a git work tree (``.git`` right there)."""
    return os.path.lexists(root / ".git")


@dataclass(frozen=True, kw_only=True, slots=True)
class GitSnapshot:
    commit: str
    untracked: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True, kw_only=True, slots=True)
class GitChange:
    """A file a command changed, relative to the root: ``before``/``after``
    are its bytes in git (``None``: absent on that side); ``untracked``: a
    new file git does not track (its content is read from disk); ``problem``
    says why it cannot be restored."""

    path: str
    before: bytes | None = None
    after: bytes | None = None
    untracked: bool = False
    problem: str = ""


def snapshot(root: Path) -> GitSnapshot:
    """The work tree now; ``GitFailed`` when git cannot say (no commit yet, ...)."""
    commit = _git(root, "stash", "create").decode().strip()
    if not commit:  # nothing modified: the tracked files are HEAD's
        commit = _git(root, "rev-parse", "--verify", "-q", "HEAD").decode().strip()
    names = _git(root, "ls-files", "-z", "--others", "--exclude-standard").split(b"\0")
    return GitSnapshot(
        commit=commit, untracked=frozenset(n.decode("utf-8", "surrogateescape") for n in names if n)
    )


def changes_between(root: Path, old: GitSnapshot, new: GitSnapshot, limit: int) -> list[GitChange]:
    """The files that differ from ``old`` to ``new`` (paths relative to ``root``)."""
    raw = _git(
        root, "diff", "--raw", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
        "--abbrev=40", old.commit, new.commit,
    )  # fmt: skip
    fields = raw.split(b"\0")
    found: list[GitChange] = []
    i = 0
    while i + 1 < len(fields) and fields[i].startswith(b":"):
        meta, path = (
            fields[i][1:].decode().split(),
            fields[i + 1].decode("utf-8", "surrogateescape"),
        )
        i += 2
        mode_a, mode_b, sha_a, sha_b = meta[0], meta[1], meta[2], meta[3]
        if any(m not in (*_REGULAR, "000000") for m in (mode_a, mode_b)):
            found.append(GitChange(path=path, problem="a symlink or submodule in git"))
            continue
        try:
            before = _blob(root, sha_a, limit)
            after = _blob(root, sha_b, limit)
        except GitFailed as exc:
            found.append(GitChange(path=path, problem=str(exc)))
            continue
        found.append(GitChange(path=path, before=before, after=after))
    for path in sorted(new.untracked - old.untracked):
        found.append(GitChange(path=path, untracked=True))
    return found


def _blob(root: Path, sha: str, limit: int) -> bytes | None:
    if sha == _EMPTY:
        return None
    size = int(_git(root, "cat-file", "-s", sha).decode().strip())
    if size > limit:
        raise GitFailed(f"it is larger than {limit:,} bytes ({size:,})")
    return _git(root, "cat-file", "blob", sha)
