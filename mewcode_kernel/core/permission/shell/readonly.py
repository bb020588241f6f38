"""Which shell commands only read: for read-only roles (the ``Explore``
subagent, plan-like children), where a command that might write is refused
rather than asked.

Deliberately narrow: a command is read-only when every simple command in it
is a known reading program used without the options that make it write or
run other code, nothing is redirected into a file, no environment prefix
changes what runs, and nothing in it is opaque (substitutions, ``eval``,
``sh -c``, ...). Anything else counts as possibly writing.
"""

from __future__ import annotations

from .analysis import CommandAnalysis, CommandPart, is_safe_redirect_target

__all__ = ["writes_possibly"]

_READERS = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "file", "stat", "du",
    "df", "pwd", "echo", "printf", "tree", "which", "whereis", "type", "sort", "uniq", "cut",
    "tr", "diff", "cmp", "comm", "basename", "dirname", "realpath", "readlink", "date", "true",
    "false", "nl", "od", "hexdump", "xxd", "md5sum", "sha1sum", "sha256sum", "column", "less",
    "more", "tac", "rev", "fold", "expand", "paste", "join", "test", "[", "cd", "whoami", "id",
    "uname", "hostname", "seq",
})  # fmt: skip
# Options that make an otherwise reading program write or run code.
_WRITING_OPTIONS = {
    "sort": ("-o", "--output"),
    "tree": ("-o",),
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "rg": ("--pre",),
}  # fmt: skip
_GIT_READERS = frozenset({
    "log", "show", "diff", "status", "blame", "ls-files", "ls-tree", "grep", "rev-parse",
    "describe", "shortlog", "cat-file", "rev-list", "whatchanged", "reflog",
})  # fmt: skip
_GIT_LISTERS = {
    "branch": ("-a", "-r", "--list", "-v", "-vv"),
    "tag": ("-l", "--list"),
    "remote": ("-v",),
}


def _part_writes(part: CommandPart) -> str | None:
    if part.noop:
        return None
    if part.risky_env:
        return f"{part.full_text!r} changes what runs through its environment"
    if any(r.write and not is_safe_redirect_target(r.target) for r in part.redirects):
        return f"{part.full_text!r} redirects output into a file"
    program, args = part.program, part.argv[1:]
    if program == "git":
        sub = next((a for a in args if not a.startswith("-")), "")
        if any(a.startswith(("-c", "--exec-path", "--git-dir", "--work-tree")) for a in args):
            return f"{part.text!r} sets git options"
        if sub in _GIT_READERS:
            return None
        allowed = _GIT_LISTERS.get(sub)
        rest = args[args.index(sub) + 1 :] if sub in args else []
        if allowed is not None and all(a in allowed for a in rest):
            return None
        return f"git {sub or '(no command)'} may change the repository"
    if program == "find":
        bad = next((a for a in args if a in _WRITING_OPTIONS["find"]), None)
        return f"find {bad} writes or runs commands" if bad else None
    if program not in _READERS:
        return f"{program or part.text!r} is not known to only read"
    bad = next(
        (
            a
            for a in args
            for o in _WRITING_OPTIONS.get(program, ())
            if a == o or a.startswith(o + "=")
        ),
        None,
    )
    return f"{program} {bad} writes a file" if bad else None


def writes_possibly(analysis: CommandAnalysis) -> str | None:
    """Why the command may write (``None``: it only reads)."""
    if analysis.opaque:
        return f"it uses {', '.join(analysis.opaque)}, which may run anything"
    for part in analysis.all_parts:
        why = _part_writes(part)
        if why:
            return why
    return None
