"""The built-in list of catastrophic shell commands, denied in every mode.

Short on purpose: commands no rule and no mode should ever let through.
Deleting or recursively re-permissioning ``/``, the home directory or a
top-level system directory; fork bombs; running a download as code; making
a file system or writing raw to a disk device. The check sees every simple
command, including those inside ``$(...)``, ``eval``/``sh -c`` strings,
``sudo``, ``xargs`` and ``find -exec`` (see ``commands.analyze``).
"""

from __future__ import annotations

import os
import posixpath
import re

from .analysis import UNKNOWN_DIR, CommandAnalysis, CommandPart

__all__ = ["catastrophic"]

_FORK_BOMB = (
    re.compile(r"([\w:.\-]+)\(\)\{[^}]*\1\|\1"),
    re.compile(r"\bfunction([\w:.\-]+)(?:\(\))?\{[^}]*\1\|\1"),
)
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "source", ".", "eval"})
_INTERPRETER = re.compile(r"^(?:python|pypy|perl|ruby|node|php|deno|bun)[\d.]*$")
_DISK = re.compile(r"^/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|dm-|loop|mapper/|sr)")
_GLOB_ONLY = re.compile(r"^[*?.\[\]{},!^-]+$")
_RECURSIVE_OWNERSHIP = frozenset({"chmod", "chown", "chgrp", "setfacl"})
_FORMAT = ("mkfs", "mke2fs", "mkswap", "wipefs", "mkdosfs", "newfs", "fdisk", "sfdisk", "parted")
_FIND_FILTERS = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-newer", "-mtime", "-mmin",
     "-size", "-user", "-group", "-empty", "-perm", "-inum", "-samefile", "-wholename"}
)  # fmt: skip
_OPTS_WITH_ARG = frozenset({"-W", "-X", "-o", "-O", "+o", "+O", "-r", "-n", "-u", "-g"})
_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-p", "--eval", "--print", "--command"})
_STDIN = frozenset({"-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"})


def _program(part: CommandPart) -> str:
    return posixpath.basename(part.argv[0]) if part.argv else ""


def _is_interpreter(name: str) -> bool:
    return name in _SHELLS or bool(_INTERPRETER.match(name))


def _expand_home(arg: str, home: str) -> str:
    for prefix in ("~", "$HOME", "${HOME}"):
        if arg == prefix or arg.startswith(prefix + "/"):
            return home + arg[len(prefix) :]
    return arg


def _bases(part: CommandPart, root: str, home: str) -> list[str]:
    """The absolute directories ``part`` may run in."""
    return [posixpath.join(root, _expand_home(c, home)) for c in part.cwds if c != UNKNOWN_DIR] or [
        root
    ]


def _vital(arg: str, bases: list[str], home: str) -> bool:
    """Whether deleting ``arg`` recursively would destroy ``/``, home or a system dir."""
    arg = _expand_home(arg, home)
    if not arg:
        return False
    for base in bases:
        norm = "/" + posixpath.normpath(posixpath.join(base, arg)).lstrip("/")
        head, _, tail = norm.rpartition("/")
        if tail and _GLOB_ONLY.match(tail):
            norm = head or "/"
        if norm in ("/", home, posixpath.dirname(home)):
            return True
        parts = [p for p in norm.split("/") if p]
        if len(parts) == 1 or any(c in parts[0] for c in "*?["):
            return True
    return False


def _operands(argv: tuple[str, ...]) -> tuple[list[str], str]:
    """Non-option arguments and the concatenated flags (long ones space-separated)."""
    operands: list[str] = []
    flags = ""
    options_done = False
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif options_done or arg == "-" or not arg.startswith(("-", "+")):
            operands.append(arg)
        elif arg == "--":
            options_done = True
        elif arg.startswith("--"):
            flags += " " + arg
        else:
            flags += arg[1:]
            skip = arg in _OPTS_WITH_ARG
    return operands, flags


def _part_danger(part: CommandPart, root: str, home: str) -> str | None:
    prog = _program(part)
    operands, flags = _operands(part.argv)
    bases = _bases(part, root, home)
    recursive = "r" in flags or "R" in flags or "--recursive" in flags
    if prog == "rm" and recursive:
        hit = next((o for o in operands if _vital(o, bases, home)), None)
        if hit is not None or "--no-preserve-root" in flags:
            return f"recursive delete of {hit or '/'}"
    if prog in _RECURSIVE_OWNERSHIP and ("R" in flags or "--recursive" in flags):
        hit = next((o for o in operands[1:] if _vital(o, bases, home)), None)
        if hit is not None:
            return f"recursive {prog} of {hit}"
    if prog == "find" and "-delete" in part.argv and operands and _vital(operands[0], bases, home):
        if not _FIND_FILTERS.intersection(part.argv):
            return f"find deleting everything under {operands[0]}"
    if prog.startswith(_FORMAT) or prog in ("shred", "blkdiscard", "dd"):
        disks = [o for o in operands if _DISK.match(o.removeprefix("of="))]
        if disks:
            return f"{prog} destroying the disk {disks[0].removeprefix('of=')}"
    for redirect in part.redirects:
        if redirect.write and _DISK.match(redirect.target):
            return f"writing raw to the disk device {redirect.target}"
    if prog == "mv" and any(_vital(o, bases, home) for o in operands[:-1]):
        return "moving / or the home directory away"
    if _is_interpreter(prog) and any(p in _DOWNLOADERS for p in part.runs_code_from):
        return f"running a download as code with {prog}"
    return None


def _reads_program_from_stdin(part: CommandPart) -> bool:
    prog = _program(part)
    if not _is_interpreter(prog):
        return False
    operands, flags = _operands(part.argv)
    if any(a in _CODE_FLAGS for a in part.argv[1:]) or "-m" in part.argv[1:]:
        return False
    if prog in _SHELLS:
        if "c" in flags.split(" ")[0]:
            return False
        return "s" in flags.split(" ")[0] or not operands or operands[0] in _STDIN
    return not operands or operands[0] in _STDIN


def _piped_download(parts: tuple[CommandPart, ...]) -> str | None:
    """``curl ... | sh``: a download feeding an interpreter its program on stdin."""
    downloading = {p.pipeline for p in parts if _program(p) in _DOWNLOADERS}
    for part in parts:
        if part.pipeline in downloading and _reads_program_from_stdin(part):
            return f"piping a download into {_program(part)}"
    return None


def catastrophic(
    analysis: CommandAnalysis, *, root: str = "/", home: str | None = None
) -> str | None:
    """Why ``analysis`` is catastrophic, or ``None``.

    ``root`` is the directory the command starts in; ``home`` defaults to ``~``.
    """
    home = posixpath.normpath(home or os.path.expanduser("~"))
    compact = re.sub(r"\s+", "", analysis.command)
    if any(p.search(compact) for p in _FORK_BOMB):
        return "a fork bomb"
    for part in analysis.all_parts:
        reason = _part_danger(part, root, home)
        if reason:
            return reason
    return _piped_download(analysis.all_parts)
