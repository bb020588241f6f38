"""Shell command analysis for ``bash`` permission checks.

``analyze(command)`` splits a command line into the simple commands it runs
(on ``&&``, ``||``, ``;``, ``|``, ``&`` and newlines, respecting quotes and
here-documents), strips what does not change *which* program runs (wrappers
``timeout``, ``nice``, ``nohup``, ``time``, ``env``; leading ``VAR=value``
assignments; keywords such as ``then``/``do``/``!``), and records what cannot
be read from the text: command substitution, backticks, process
substitution, subshells, ``eval``, ``sh -c``. Such commands are *opaque*: no
pattern rule can allow them. The commands found inside them are still
analysed (``nested``) so deny rules and the catastrophic list see them.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

from .lexer import SEPARATORS, Op, Word, lex
from .words import (
    SHELL_STATE_BUILTINS,
    SUDO_ARG_OPTS,
    XARGS_ARG_OPTS,
    is_assignment,
    is_risky_env,
    skip_values,
    strip_wrapper,
)

__all__ = [
    "UNKNOWN_DIR",
    "UNREADABLE",
    "CommandAnalysis",
    "CommandPart",
    "Redirect",
    "analyze",
    "is_safe_redirect_target",
]

UNKNOWN_DIR = "\0unknown"
UNREADABLE = "could not analyse: "
_MAX_CWDS = 8
_RUNNERS = frozenset(
    {
        "setsid",
        "stdbuf",
        "ionice",
        "unbuffer",
        "strace",
        "ltrace",
        "chronic",
        "caffeinate",
        "busybox",
    }
)
_PRIVILEGE = frozenset({"sudo", "doas", "exec", "command", "builtin"})
_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-p", "--eval", "--print"})
_INTERPRETERS = ("python", "pypy", "perl", "ruby", "node", "deno", "bun", "php", "lua", "Rscript")

_MAX_DEPTH = 4
_PREFIX_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{"})
_NOOP_KEYWORDS = frozenset({"fi", "done", "esac", "}"})
_OPAQUE_KEYWORDS = frozenset({"case", "select", "function", "coproc"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "busybox"})
_SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_SAFE_SET = frozenset(
    {"-e", "-u", "-x", "-v", "-o", "pipefail", "errexit", "nounset", "xtrace", "+e", "+u", "+x",
     "-eu", "-ex", "-ux", "-eux", "-euo", "-exo", "-eo", "-uo", "-euxo"}
)  # fmt: skip
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_MAX_OPERANDS = 200
_STDIN_ARGS = frozenset({"xargs", "parallel"})


def _tilde_trick(raw: str) -> bool:
    """``~-`` ($OLDPWD), ``~+`` ($PWD) and ``~N`` (the directory stack): where
    they lead is only known when the command runs."""
    head = raw.split("/", 1)[0]
    return head.startswith(("~-", "~+")) or (
        len(head) > 1 and head[0] == "~" and head[1:].isdigit()
    )


# an absolute, home or parent path inside a larger word: a sed or awk
# script's file (``w /x``), a quoted option value, ``key:/path``
_EMBEDDED = re.compile(r"""(?:^|[\s=:,;'"(>])((?:/|~/|\.\./)[^\s'"),;]*)""")


def _operands(word: Word) -> list[str]:
    """The paths a word may name: the word, the value of ``--opt=value`` /
    ``key=value``, what follows a short option (``-o../x``), and absolute or
    parent paths inside it."""
    value = word.value
    found: list[str] = []
    if value.startswith("-"):
        if "=" in value:
            found.append(value.split("=", 1)[1])
        else:
            rest = value[2:] if len(value) > 2 and not value.startswith("--") else ""
            if rest.startswith(("/", ".", "~")):
                found.append(rest)
    elif "=" in value and not value.startswith(("/", ".", "~")):
        found.append(value.split("=", 1)[1])
    else:
        found.append(value)
    if "://" not in value:
        found += [m.group(1) for m in _EMBEDDED.finditer(value) if m.group(1) not in found]
    return [f for f in found if f]


@dataclass(frozen=True, kw_only=True, slots=True)
class Redirect:
    """A file redirection of one simple command. ``write`` for ``>``-like ops."""

    op: str
    target: str
    write: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class CommandPart:
    """One simple command.

    ``argv`` are the unquoted words of the program actually run (wrappers and
    assignments stripped); ``text`` is the same words as written, joined by
    single spaces, and ``canonical`` their shell-quoted values; ``full_text``
    and ``full_canonical`` include the assignments and wrappers. ``risky_env``
    says an assignment (``PATH=...``, ``LD_PRELOAD=...``) changes what runs.
    ``cwds`` are the directories it may run in after earlier ``cd`` commands
    (``""`` is the root; ``UNKNOWN_DIR`` when a ``cd`` could not be followed).
    ``pipeline`` is shared by the commands of one pipeline (``a | b``);
    ``runs_code_from`` names the programs whose output this command runs as
    code (``bash <(curl ...)``, ``eval "$(wget ...)"``). ``operands`` are the
    paths its arguments may name (``key=value`` and ``--opt=value`` values
    included), ``globbed`` those holding an unquoted wildcard, and
    ``dynamic_args`` says an argument holds an expansion (its value is only
    known when it runs). ``risky_env``: it is run with variables assigned.
    """

    text: str
    canonical: str
    full_text: str
    full_canonical: str
    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    risky_env: bool = False
    noop: bool = False
    pipeline: int = 0
    cwds: tuple[str, ...] = ("",)
    runs_code_from: tuple[str, ...] = ()
    operands: tuple[str, ...] = ()
    globbed: tuple[str, ...] = ()
    dynamic_args: bool = False

    @property
    def program(self) -> str:
        """The basename of the program run (``""`` for an empty command)."""
        return posixpath.basename(self.argv[0]) if self.argv else ""


@dataclass(frozen=True, kw_only=True, slots=True)
class CommandAnalysis:
    """What ``analyze`` found. ``opaque`` lists why the command cannot be
    matched by a pattern rule; ``nested`` holds commands found inside
    substitutions, ``eval``/``sh -c`` strings, ``xargs``/``find -exec`` and
    ``sudo``, for deny rules and the catastrophic list."""

    command: str
    parts: tuple[CommandPart, ...]
    nested: tuple[CommandPart, ...]
    opaque: tuple[str, ...]

    @property
    def all_parts(self) -> tuple[CommandPart, ...]:
        return self.parts + self.nested

    @property
    def unreadable(self) -> tuple[str, ...]:
        """The reasons the text could not be analysed at all (asked in every mode)."""
        return tuple(r for r in self.opaque if r.startswith(UNREADABLE))


def _quote(value: str) -> str:
    return shlex.quote(value) if value else "''"


class _Builder:
    def __init__(self, depth: int, counter: Iterator[int], cwds: tuple[str, ...]) -> None:
        self.depth = depth
        self.counter = counter
        self.parts: list[CommandPart] = []
        self.nested: list[CommandPart] = []
        self.opaque: list[str] = []
        # every directory a later command may run in; "" is the root
        self.cwds = cwds

    def flag(self, reason: str) -> None:
        if reason not in self.opaque:
            self.opaque.append(reason)

    def absorb(self, text: str, why: str | None) -> tuple[CommandPart, ...]:
        """Analyse ``text`` (run by the shell indirectly) into ``nested``."""
        if why:
            self.flag(why)
        if self.depth >= _MAX_DEPTH:
            self.flag("could not analyse: commands nested too deeply")
            return ()
        inner = _analyze(text, self.depth + 1, self.counter, self.cwds)
        self.nested.extend(inner.all_parts)
        for reason in inner.opaque:
            self.flag(reason)
        return inner.parts

    def part(self, tokens: list[Word | Op], pipeline: int) -> None:
        redirects: list[Redirect] = []
        plain: list[Word] = []
        pending: str | None = None
        inside: dict[int, list[str]] = {}  # id(word) -> programs run by its substitutions
        for tok in tokens:
            if isinstance(tok, Op):
                pending = tok.text if tok.is_redirect else pending
                continue
            for sub in tok.subs:
                inside.setdefault(id(tok), []).extend(p.program for p in self.absorb(sub, None))
            if pending is None:
                plain.append(tok)
                continue
            op, pending = pending, None
            if op in ("<<", "<<-", "<<<"):
                continue  # a here-document delimiter or here-string, not a file
            if op in (">&", "<&") and (tok.value.isdigit() or tok.value == "-"):
                continue  # fd duplication
            redirects.append(Redirect(op=op, target=tok.value, write=op not in ("<", "<&")))
        i, assigned = 0, []
        while i < len(plain):
            w = plain[i]
            if is_assignment(w):
                assigned.append(w.raw.partition("=")[0])
                i += 1
                continue
            if not w.quoted and w.value in _PREFIX_KEYWORDS:
                i += 1
                continue
            j, problem = strip_wrapper(plain, i)
            if problem:
                self.flag(problem)
            if j == i:
                break
            assigned += [p.raw.partition("=")[0] for p in plain[i:j] if is_assignment(p)]
            i = j
        run = plain[i:]
        noop = not run
        for name in assigned:
            if is_risky_env(name):
                self.flag(f"setting {name}, which can change what a program runs or loads")
        if assigned and not run:
            self.flag(f"a variable assignment ({', '.join(assigned[:3])}=...)")
        for w in [*plain, *(t for t in tokens if isinstance(t, Word))]:
            if not w.quoted and _tilde_trick(w.raw):
                self.flag(
                    f"the tilde expansion {w.raw.split('/', 1)[0]} (a directory known only when it runs)"
                )
        if run and not run[0].quoted:
            head = run[0].value
            if head in _OPAQUE_KEYWORDS:
                self.flag(f"the shell construct '{head}'")
            elif head == "for":
                noop = True  # a loop header runs nothing itself; its body is checked
                if len(run) > 1 and is_risky_env(run[1].value):
                    self.flag(f"a loop setting {run[1].value}")
            elif head in _NOOP_KEYWORDS:
                run = run[1:]
                noop = not run
        self.state_changes(run)
        if run and run[0].expands:
            self.flag("the program name comes from an expansion")
        operands: list[str] = []
        globbed: list[str] = []
        dynamic = False
        for w in run[1 : 1 + _MAX_OPERANDS] if not noop else ():
            if w.expands or w.subs:
                dynamic = True
                continue
            (globbed if w.globs else operands).extend(_operands(w))
        if run and posixpath.basename(run[0].value) in _STDIN_ARGS:
            dynamic = True  # its arguments come from its input
        part = CommandPart(
            text=" ".join(w.raw for w in run),
            canonical=" ".join(_quote(w.value) for w in run),
            full_text=" ".join(w.raw for w in plain),
            full_canonical=" ".join(_quote(w.value) for w in plain),
            argv=tuple(w.value for w in run),
            redirects=tuple(redirects),
            risky_env=bool(assigned),
            noop=noop,
            pipeline=pipeline,
            cwds=self.cwds,
            runs_code_from=_code_sources(run, inside),
            operands=tuple(operands),
            globbed=tuple(globbed),
            dynamic_args=dynamic,
        )
        self.parts.append(part)
        self.follow(part, run)

    def state_changes(self, run: list[Word]) -> None:
        """Flag builtins that change variables or options, and arithmetic tests."""
        if not run or run[0].quoted:
            return
        head = run[0].value
        args = [w.value for w in run[1:]]
        if head in SHELL_STATE_BUILTINS:
            self.flag(f"the builtin '{head}', which changes variables or options")
        elif head == "set" and (not args or not set(args) <= _SAFE_SET):
            self.flag("'set' changing shell options or arguments")
        elif head == "printf" and "-v" in args:
            self.flag("'printf -v', which assigns a variable")
        elif head == "[[" and _ARITHMETIC_TESTS.intersection(args):
            self.flag("arithmetic in [[ ... ]] (it evaluates variables as expressions)")

    def follow(self, part: CommandPart, run: list[Word]) -> None:
        """Track ``cd`` and look inside eval / sh -c / xargs / find -exec / sudo."""
        argv = list(part.argv)
        while argv and posixpath.basename(argv[0]) in _PRIVILEGE:
            argv = argv[1:]
            while argv and argv[0].startswith("-"):
                argv = argv[2:] if argv[0] in SUDO_ARG_OPTS else argv[1:]
            if argv:
                self.nested.append(_derived(part, argv))
        if not argv:
            return
        prog = posixpath.basename(argv[0])
        if prog in ("cd", "pushd", "popd"):
            self.change_dir(argv, run)
        elif prog == "eval":
            self.absorb(" ".join(argv[1:]), "eval")
        elif prog in _SHELLS:
            for k, arg in enumerate(argv[1:], start=1):
                if arg.startswith("-") and not arg.startswith("--") and "c" in arg:
                    if k + 1 < len(argv):
                        self.absorb(argv[k + 1], f"{prog} -c")
                    break
        elif prog.startswith(_INTERPRETERS):
            if any(a in _CODE_FLAGS for a in argv[1:]):
                self.flag(f"inline code run by {prog}")
        elif prog in _RUNNERS:
            rest = argv[1:]
            while rest and rest[0].startswith("-"):
                rest = rest[1:]
            if rest:
                self.nested.append(_derived(part, rest))
        elif prog == "watch":
            j = skip_values(argv, 1, frozenset({"-n", "--interval", "-d", "-q"}))
            self.absorb(" ".join(argv[j:]), "watch")
        elif prog in ("su", "runuser", "script") and ("-c" in argv or "--command" in argv):
            k = argv.index("-c") if "-c" in argv else argv.index("--command")
            self.absorb(argv[k + 1] if k + 1 < len(argv) else "", f"{prog} -c")
        elif prog == "xargs":
            j = skip_values(argv, 1, XARGS_ARG_OPTS)
            if j < len(argv):
                self.nested.append(_derived(part, argv[j:]))
        elif prog == "find":
            for k, arg in enumerate(argv):
                if arg in ("-exec", "-execdir", "-ok", "-okdir") and k + 1 < len(argv):
                    rest = argv[k + 1 :]
                    end = next((n for n, a in enumerate(rest) if a in (";", "+")), len(rest))
                    self.nested.append(_derived(part, rest[:end]))

    def change_dir(self, argv: list[str], run: list[Word]) -> None:
        """Add the possible new working directories (``UNKNOWN_DIR`` when unsure)."""
        target = argv[1] if len(argv) > 1 else "~"
        word = run[1] if len(run) > 1 else None
        dynamic = word is not None and (word.expands or any(c in word.raw for c in "*?[{`"))
        dynamic = dynamic or (word is not None and _tilde_trick(word.raw))
        if argv[0] != "cd" or len(argv) > 2 or dynamic or target.startswith("-"):
            self.cwds = (*self.cwds, UNKNOWN_DIR)
            return
        new = tuple(posixpath.join(c, target) for c in self.cwds if c != UNKNOWN_DIR)
        cwds = tuple(dict.fromkeys((*self.cwds, *new)))
        self.cwds = cwds if len(cwds) <= _MAX_CWDS else (*cwds[:_MAX_CWDS], UNKNOWN_DIR)


def _code_sources(run: list[Word], inside: dict[int, list[str]]) -> tuple[str, ...]:
    """Programs inside substitutions that ``run`` executes as code."""
    if not run:
        return ()
    prog = posixpath.basename(run[0].value)
    shell_like = prog in _SHELLS or prog in ("source", ".", "eval")
    if not shell_like and not prog.startswith(_INTERPRETERS):
        return ()
    found: list[str] = []
    first_arg = True
    for k, w in enumerate(run[1:], start=1):
        code_position = shell_like or first_arg or run[k - 1].value in _CODE_FLAGS
        if code_position:
            found.extend(inside.get(id(w), ()))
        if not w.value.startswith("-"):
            first_arg = False
    return tuple(found)


def _derived(part: CommandPart, argv: list[str]) -> CommandPart:
    text = " ".join(_quote(a) for a in argv)
    return CommandPart(
        text=text,
        canonical=text,
        full_text=text,
        full_canonical=text,
        argv=tuple(argv),
        redirects=part.redirects,
        risky_env=part.risky_env,
        pipeline=part.pipeline,
        runs_code_from=part.runs_code_from,
        cwds=part.cwds,
        operands=tuple(a for a in argv[1:] if not a.startswith("-"))[:_MAX_OPERANDS],
    )


def _analyze(
    command: str, depth: int, counter: Iterator[int], cwds: tuple[str, ...] = ("",)
) -> CommandAnalysis:
    lexed = lex(command)
    b = _Builder(depth, counter, cwds)
    for reason in lexed.opaque:
        b.flag(reason)
    current: list[Word | Op] = []
    pipeline = next(counter)
    for tok in lexed.tokens:
        if isinstance(tok, Op) and tok.text in SEPARATORS:
            if current:
                b.part(current, pipeline)
            current = []
            if tok.text not in ("|", "|&"):
                pipeline = next(counter)
            continue
        if isinstance(tok, Op) and tok.text in ("(", ")"):
            if tok.text == "(" and any(isinstance(t, Word) for t in current):
                b.flag("a function definition or stray '('")
            elif tok.text == "(":
                b.flag("a subshell ( ... )")
            continue
        current.append(tok)
    if current:
        b.part(current, pipeline)
    for inner in lexed.substitutions:
        b.absorb(inner, None)
    return CommandAnalysis(
        command=command, parts=tuple(b.parts), nested=tuple(b.nested), opaque=tuple(b.opaque)
    )


def analyze(command: str) -> CommandAnalysis:
    """Split and normalise ``command``; see the module docstring."""
    return _analyze(command, 0, itertools.count())


def is_safe_redirect_target(target: str) -> bool:
    """Whether writing to ``target`` cannot change a file (``/dev/null`` and friends)."""
    return target in _SAFE_TARGETS
