"""Which shell commands only read, for read-only roles (``Explore``, ``Plan``,
a fork of them): the first refusal, with a reason the model can act on.
With the OS sandbox such a role's commands also run with the whole file
system read-only, and the OS is the boundary; without it, this reading is
all there is.

Deliberately short and strict, since reading text is all there is here: a
command passes only when every simple command in it is a program from a
short list whose every form only reads, or one of a few whose writing forms
are refused by shape rather than by name (any abbreviation of a writing long
option, any cluster of short options holding a writing letter, any extra
positional argument that would be an output file); nothing is redirected
into a file, no environment prefix changes what runs, and nothing in it is
opaque (substitutions, ``eval``, ``sh -c``, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .analysis import CommandAnalysis, CommandPart, is_safe_redirect_target

__all__ = ["writes_possibly"]

# Programs that read in every form they take.
_READERS = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "stat", "du", "df", "pwd",
    "echo", "printf", "which", "whereis", "type", "cut", "tr", "diff", "cmp", "comm",
    "basename", "dirname", "realpath", "readlink", "true", "false", "nl", "od", "hexdump",
    "md5sum", "sha1sum", "sha256sum", "sha512sum", "column", "tac", "rev", "fold", "expand",
    "paste", "join", "test", "[", "cd", "whoami", "id", "uname", "seq",
})  # fmt: skip

_GIT_READERS = frozenset({
    "log", "show", "diff", "status", "blame", "ls-files", "ls-tree", "grep", "rev-parse",
    "describe", "shortlog", "cat-file", "rev-list", "whatchanged", "reflog",
})  # fmt: skip
_GIT_LISTERS = {
    "branch": ("-a", "-r", "--list", "-v", "-vv"),
    "tag": ("-l", "--list"),
    "remote": ("-v",),
}
# Long options that write a file or run a program, for programs that take any
# unambiguous abbreviation of a long option (GNU getopt, git's parse-options).
_GIT_DANGEROUS_LONG = (
    "--output", "--open-files-in-pager", "--ext-diff", "--textconv", "--exec", "--paginate",
    "--upload-pack", "--receive-pack", "--config-env", "--exec-path", "--git-dir",
    "--work-tree", "--namespace", "--super-prefix",
)  # fmt: skip
_GIT_TOP_SHORT = "cp"  # git -c name=value, git -p (a pager)


def _is_abbreviation(arg: str, options: Sequence[str]) -> bool:
    """Whether ``arg`` (``--x`` or ``--x=value``) may be read as one of
    ``options``: any prefix of at least ``--`` plus one letter counts."""
    if not arg.startswith("--") or len(arg) < 3:
        return False
    name = arg.split("=", 1)[0]
    return any(option.startswith(name) for option in options)


def _short_cluster(arg: str) -> str:
    """The letters of a short-option cluster (``-rno`` -> ``rno``), else ``""``."""
    return arg[1:] if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1 else ""


def _positionals(args: Sequence[str]) -> list[str]:
    out: list[str] = []
    ended = False
    for arg in args:
        if ended or arg == "-" or not arg.startswith("-"):
            out.append(arg)
        elif arg == "--":
            ended = True
    return out


def _sort(args: Sequence[str]) -> str | None:
    for arg in args:
        if _is_abbreviation(arg, ("--output", "--compress-program")) or "o" in _short_cluster(arg):
            return f"sort {arg} writes a file or runs a program"
    return None


def _uniq(args: Sequence[str]) -> str | None:
    # uniq INPUT OUTPUT: a second operand is a file it writes
    if len(_positionals(args)) > 1:
        return "uniq with two file operands writes the second"
    return None


def _xxd(args: Sequence[str]) -> str | None:
    if len(_positionals(args)) > 1:
        return "xxd with two file operands writes the second"
    if any(
        a in ("-r", "-revert") or (_short_cluster(a) and "r" in _short_cluster(a)) for a in args
    ):
        return "xxd -r writes binary output"
    return None


def _tree(args: Sequence[str]) -> str | None:
    for arg in args:
        if "o" in _short_cluster(arg) or _is_abbreviation(arg, ("--fromfile",)):
            return f"tree {arg} writes a file or reads a listing"
    return None


def _file(args: Sequence[str]) -> str | None:
    for arg in args:
        if "C" in _short_cluster(arg) or _is_abbreviation(arg, ("--compile",)):
            return "file -C writes a compiled magic file"
    return None


def _rg(args: Sequence[str]) -> str | None:
    for arg in args:
        if arg.startswith("--pre") or _is_abbreviation(arg, ("--pre",)):
            return f"rg {arg} runs a program on each file"
    return None


def _find(args: Sequence[str]) -> str | None:
    writers = (
        "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
        "-fls",
    )  # fmt: skip
    bad = next((a for a in args if a in writers), None)
    return f"find {bad} writes or runs commands" if bad else None


def _git(args: Sequence[str]) -> str | None:
    sub = next((a for a in args if not a.startswith("-")), "")
    before = list(args[: list(args).index(sub)]) if sub in args else list(args)
    for arg in args:
        if _is_abbreviation(arg, _GIT_DANGEROUS_LONG):
            return f"git {arg} writes a file, runs a program or changes what git reads"
        if "O" in _short_cluster(arg):  # grep -O<pager>, also bundled (-iOvim)
            return f"git {arg} runs a program"
    for arg in before:  # git -c name=value, git -p (a pager) before the command
        if any(c in _GIT_TOP_SHORT for c in _short_cluster(arg)):
            return f"git {arg} runs a program or changes git's config"
    if sub in _GIT_READERS:
        return None
    allowed = _GIT_LISTERS.get(sub)
    rest = list(args[list(args).index(sub) + 1 :]) if sub in args else []
    if allowed is not None and all(a in allowed for a in rest):
        return None
    return f"git {sub or '(no command)'} may change the repository"


_CHECKED: dict[str, Callable[[Sequence[str]], str | None]] = {
    "sort": _sort,
    "uniq": _uniq,
    "xxd": _xxd,
    "tree": _tree,
    "file": _file,
    "rg": _rg,
    "find": _find,
    "git": _git,
}


def _part_writes(part: CommandPart) -> str | None:
    if part.noop:
        return None
    if part.risky_env:
        return f"{part.full_text!r} changes what runs through its environment"
    if any(r.write and not is_safe_redirect_target(r.target) for r in part.redirects):
        return f"{part.full_text!r} redirects output into a file"
    program, args = part.program, part.argv[1:]
    check = _CHECKED.get(program)
    if check is not None:
        return check(args)
    if program not in _READERS:
        return f"{program or part.text!r} is not known to only read"
    return None


def writes_possibly(analysis: CommandAnalysis) -> str | None:
    """Why the command may write (``None``: it only reads)."""
    if analysis.opaque:
        return f"it uses {', '.join(analysis.opaque)}, which may run anything"
    for part in analysis.all_parts:
        why = _part_writes(part)
        if why:
            return why
    return None
