"""Per-turn environment context: project root, date, platform, git branch and
short status, rendered as an ``<environment>`` block that goes on the user
side of the turn (never into the system prompt, which must stay stable).

Its contents change from day to day and with every edit, so replayed
cassettes compare it masked (``mask_environment``; see docs/cassettes.md).
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from ..fs.safe_git import GitFailed, run_git

__all__ = [
    "ENV_CLOSE",
    "ENV_OPEN",
    "GIT_STATUS_LINES",
    "IDLE_GAP",
    "Environment",
    "gather_environment",
    "idle_note",
    "mask_environment",
    "render_environment",
]

ENV_OPEN = "<environment>"
ENV_CLOSE = "</environment>"
GIT_STATUS_LINES = 20
#: A resumed session idle for longer than this gets a note about the gap.
IDLE_GAP = timedelta(hours=6)
_GIT_TIMEOUT = 3.0
_MASK = re.compile(re.escape(ENV_OPEN) + r".*?" + re.escape(ENV_CLOSE), re.DOTALL)


@dataclass(frozen=True, kw_only=True, slots=True)
class Environment:
    """Facts about the moment of a turn. ``git_status`` is ``None`` outside a
    repository; ``git_status_more`` counts status lines left out."""

    root: Path
    today: date
    platform: str
    git_branch: str | None = None
    git_status: tuple[str, ...] | None = None
    git_status_more: int = 0
    notes: tuple[str, ...] = ()


def _git(root: Path, *args: str) -> str | None:
    try:
        return run_git(root, args, timeout=_GIT_TIMEOUT).decode("utf-8", "replace")
    except GitFailed:
        return None


def _branch(header: str) -> str:
    """The branch from ``git status --branch``'s ``## ...`` line."""
    text = header[3:].strip()
    for prefix in ("No commits yet on ", "Initial commit on "):
        if text.startswith(prefix):
            return f"{text[len(prefix) :]} (no commits yet)"
    if text.startswith("HEAD (no branch)"):
        return "detached HEAD"
    name, _, tracking = text.partition("...")
    ahead = tracking.partition(" ")[2]
    return f"{name} {ahead}".strip() if ahead else name


def gather_environment(
    root: Path, *, today: date | None = None, notes: tuple[str, ...] = ()
) -> Environment:
    """Look at ``root`` now (runs ``git status`` once; call it from a thread
    in async code)."""
    output = _git(root, "status", "--short", "--branch")
    branch: str | None = None
    status: tuple[str, ...] | None = None
    more = 0
    if output is not None:
        lines = [line for line in output.splitlines() if line.strip()]
        if lines and lines[0].startswith("## "):
            branch = _branch(lines.pop(0))
        else:
            branch = "unknown"
        status, more = tuple(lines[:GIT_STATUS_LINES]), max(len(lines) - GIT_STATUS_LINES, 0)
    return Environment(
        root=root,
        today=today or date.today(),
        platform=f"{platform.system() or 'unknown'} {platform.release()} ({platform.machine()})",
        git_branch=branch,
        git_status=status,
        git_status_more=more,
        notes=notes,
    )


def render_environment(env: Environment) -> str:
    """The ``<environment>`` block for ``env``."""
    lines = [
        ENV_OPEN,
        "Context from MewCode for this turn (not written by the user):",
        f"- project root: {env.root}",
        f"- date: {env.today.isoformat()}",
        f"- platform: {env.platform}",
    ]
    if env.git_branch is None:
        lines.append("- git: not a git repository")
    else:
        lines.append(f"- git branch: {env.git_branch}")
        if env.git_status:
            lines.append("- git status (short):")
            lines += [f"    {line}" for line in env.git_status]
            if env.git_status_more:
                lines.append(f"    ... and {env.git_status_more} more")
        else:
            lines.append("- git status: clean")
    lines += [f"- note: {note}" for note in env.notes]
    lines.append(ENV_CLOSE)
    return "\n".join(lines)


def idle_note(gap: timedelta) -> str:
    """The note for a session resumed after ``gap`` of inactivity."""
    hours = gap.total_seconds() / 3600
    span = f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.0f} hours"
    return (
        f"this session was resumed after {span} without activity; files, branches and "
        "running processes may have changed since, so re-check them before relying on "
        "what the conversation says about them."
    )


def mask_environment(text: str) -> str:
    """``text`` with the contents of every ``<environment>`` block blanked
    (what replay compares, so a recording matches on another day or machine)."""
    return _MASK.sub(ENV_OPEN + "…" + ENV_CLOSE, text) if ENV_OPEN in text else text
