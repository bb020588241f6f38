"""Where instruction files and their ``@path`` imports may come from:
``ImportScope``.

Whatever an instruction file names goes into the system prompt, that is, to
the model; a cloned repository's ``CLAUDE.md`` must not be able to send it
``~/.ssh/id_rsa`` or ``/proc/self/environ``. So every place is judged by its
resolved real path (``..``, ``~`` and every symlink followed) against two
folders:

* the project root, and
* the user's MewCode folder (``mewcode_home()``).

A file belongs to the one of the two holding it (the deeper one when one
lies inside the other). What it may import depends on that:

* the user's own files (``~/.mewcode/MEWCODE.md`` and what it imports from
  the MewCode folder) may import from both folders;
* the project's files (the root's, the parents' up to the git root, and what
  they import from the project) may import from the project; from the
  MewCode folder only when the project is trusted (``ProjectTrust.trusted``)
  and only Markdown: the folder also holds the user's config (provider keys),
  the checkpoint key and the trust store, and a project with no settings
  counts as trusted without anyone having looked at it.

Never, whoever asks: ``/proc``, ``/sys``, ``/dev``, ``/run`` (process
environments, devices, mounted secrets) and hidden entries of the home
directory other than the MewCode folder (``~/.ssh``, ``~/.aws``,
``~/.netrc``...), even when the project root is the home directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["ImportScope", "Origin"]

Origin = Literal["user", "project"]

#: pseudo and runtime file systems: environments, memory, devices, secrets
_SYSTEM = ("/proc", "/sys", "/dev", "/run")
#: what instructions are written in; the only files a project may import
#: from the MewCode folder
_INSTRUCTION_SUFFIXES = (".md", ".markdown")


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


@dataclass(frozen=True, kw_only=True, slots=True)
class ImportScope:
    """The folders of one load, as resolved real paths, and the project's trust."""

    project: str
    state: str | None
    home: str | None
    trusted: bool

    @classmethod
    def of(cls, root: Path, *, state: Path | None, home: Path | None, trusted: bool) -> ImportScope:
        return cls(
            project=os.path.realpath(root),
            state=os.path.realpath(state) if state is not None else None,
            home=os.path.realpath(home) if home is not None else None,
            trusted=trusted,
        )

    def origin(self, real: str) -> Origin | None:
        """Whose file ``real`` is: the deeper of the two folders holding it."""
        holders = [
            (len(folder), origin)
            for folder, origin in ((self.project, "project"), (self.state, "user"))
            if folder is not None and _within(real, folder)
        ]
        return max(holders)[1] if holders else None  # type: ignore[return-value]

    def system(self, real: str) -> str | None:
        """Why ``real`` is a system folder nothing is read from, or ``None``
        (a project kept in one may still read its own files)."""
        for folder in _SYSTEM:
            if _within(real, folder) and not _within(self.project, folder):
                return f"{folder} is never read into the prompt"
        return None

    def never(self, real: str) -> str | None:
        """Why no import may ever read ``real``, or ``None``."""
        system = self.system(real)
        if system is not None:
            return system
        if self.home is None or not _within(real, self.home) or real == self.home:
            return None
        if self.state is not None and _within(real, self.state):
            return None
        first = os.path.relpath(real, self.home).split("/", 1)[0]
        if first.startswith(".") and not _within(self.project, os.path.join(self.home, first)):
            return f"~/{first} is hidden in your home directory, where keys and credentials live"
        return None

    def refusal(self, real: str, by: Origin, *, named: str | None = None) -> str | None:
        """Why a file of ``by`` may not import ``real`` (named as ``named``
        before links were followed), or ``None`` if it may. A name inside the
        project is judged as the project's, whoever wrote the import: a link
        the project planted must not borrow the user's reach."""
        never = self.never(real)
        if never is not None:
            return never
        if named is not None and self.origin(os.path.abspath(named)) == "project":
            by = "project"
        holder = self.origin(real)
        if holder == "project":
            return None
        if by == "user":
            return None if holder == "user" else "it is outside the project and your MewCode folder"
        if holder != "user":
            where = "the project and your MewCode folder" if self.trusted else "the project"
            return f"it is outside {where}"
        if not self.trusted:
            return (
                "it is in your MewCode folder, which the instructions of a project you have "
                "not trusted may not read (/trust trusts the project)"
            )
        if not real.lower().endswith(_INSTRUCTION_SUFFIXES):
            return (
                "a project's instructions may import only Markdown files from your MewCode folder"
            )
        return None
