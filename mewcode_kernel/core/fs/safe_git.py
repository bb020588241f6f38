"""Running git in a repository MewCode did not write: its ``.git/config`` can
name programs that git runs on its own (``core.fsmonitor`` on every ``git
status``, hooks, a clean filter when a modified file is hashed, an external
diff, automatic gc). Every git call of the core goes through ``run_git``,
which turns all of those off; reading the config itself runs nothing."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["GitFailed", "run_git"]

SAFE_OPTIONS: tuple[str, ...] = (
    "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
    "-c", "core.untrackedCache=false", "-c", "diff.external=", "-c", "gc.auto=0",
    "-c", "core.sshCommand=false", "-c", "protocol.allow=never", "--no-pager",
)  # fmt: skip


class GitFailed(Exception):
    pass


def _filters_off(root: Path, timeout: float) -> list[str]:
    """``-c`` options emptying every filter driver the config names."""
    try:
        listed = _run(root, ["config", "-z", "--get-regexp", r"^filter\."], timeout)
    except GitFailed:
        return []  # none configured (git exits 1)
    names = set()
    for item in listed.split(b"\0"):
        key = item.split(b"\n", 1)[0].decode("utf-8", "replace")
        name, dot, _ = key[len("filter.") :].rpartition(".")
        if key.startswith("filter.") and dot and name:
            names.add(name)
    options: list[str] = []
    for name in sorted(names):
        for var, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            options += ["-c", f"filter.{name}.{var}={value}"]
    return options


def run_git(root: Path, args: Sequence[str], *, timeout: float = 20.0) -> bytes:
    """``git ARGS`` in ``root`` with nothing of the repository's config run;
    its stdout, or ``GitFailed`` (not a repository, git missing, an error)."""
    return _run(root, [*_filters_off(root, timeout), *args], timeout)


def _run(root: Path, args: list[str], timeout: float) -> bytes:
    env = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        out = subprocess.run(
            ["git", *SAFE_OPTIONS, *args],
            cwd=root,
            capture_output=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitFailed(str(exc)) from None
    if out.returncode != 0:
        raise GitFailed(out.stderr.decode(errors="replace").strip()[:300])
    return out.stdout
