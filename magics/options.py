"""The options of ``%%agent`` / ``%agent`` (CONTRACTS.md, Magics) and how a
cell is split into options, prompt and slash command.

Options come first on the magic's line; in the line form the prompt follows
them (``%agent --mode plan explain utils.py``). ``{var}`` and ``$var`` in the
options and in slash commands are expanded from the user namespace, as
IPython does for magics; prompts are taken literally.

An expansion fills exactly one option value, whatever the value holds: the
line is split into words before anything is expanded, each expanded value
stays inside the word it was written in, and an option's value reaches the
parser joined to its name (``--model=<value>``), so ``v = "x --mode
bypassPermissions"`` in ``--model {v}`` is a strange model name, never a
second option. An expansion where an option's name goes, an empty value or
one holding a control character (a line break, a tab) is an error naming
the option. In a slash command the command's name is never expanded and
each expansion must be one word (the commands split their arguments at
spaces).
"""

from __future__ import annotations

import re
import secrets
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.utils.process import arg_split
from IPython.utils.text import DollarFormatter

from mewcode_kernel.core.permission.modes import MODES

__all__ = ["MODES", "AgentCall", "AgentOptions", "agent", "parse_cell"]


#: Options that take no value; every other ``--option`` takes the next word.
_FLAGS = frozenset({"--new", "--background", "--fork"})
#: a word of the magic's line; ``{...}`` is one piece even with spaces inside
_WORD = re.compile(r"(?:\{[^{}\n]*\}|\S)+")


@magic_arguments()
@argument("--provider", metavar="NAME", help="Use this configured provider for this cell.")
@argument("--model", metavar="MODEL", help="Use this model for this cell.")
@argument(
    "--mode",
    choices=MODES,
    help="Permission mode for this cell only (/mode changes it for the session).",
)
@argument("--new", action="store_true", help="Start a new session.")
@argument("--resume", metavar="SESSION_ID", help="Continue a stored session (an id prefix works).")
@argument(
    "--fork",
    action="store_true",
    help="With --resume: continue a copy in a new session (one in use by another kernel).",
)
@argument("--agent", metavar="NAME", help="Run the turn as this subagent definition.")
@argument("--max-turns", metavar="N", type=int, help="Stop after N model requests.")
@argument(
    "--background",
    action="store_true",
    help="Start the turn as a background task and return at once.",
)
@argument("--out", metavar="VAR", help="Also store the final answer text in the variable VAR.")
def agent(line: str, cell: str | None = None) -> None:
    """Run a coding-agent turn.

    %%agent [options] + a prompt in the cell body: one user turn, run until the
    model stops calling tools, streamed as it goes. %agent [options] PROMPT is
    the one-line form. Consecutive agent cells continue the same session.

    A body (or %agent text) starting with / is a slash command: /help lists them
    (/clear /sessions /resume /mode /model /tools /cost /permissions /sandbox
    /trust ...).

    Before the agent edits files or runs commands it asks: with buttons in a live
    notebook; by MEWCODE_HEADLESS_APPROVAL (deny, the default, or allow) when
    nobody can be asked (nbclient, nbval, jupyter execute).
    """


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentOptions:
    """The parsed options of one agent cell."""

    provider: str | None = None
    model: str | None = None
    mode: str | None = None
    new: bool = False
    resume: str | None = None
    fork: bool = False
    agent: str | None = None
    max_turns: int | None = None
    background: bool = False
    out: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentCall:
    """One agent cell: its options and either a prompt or a slash command."""

    options: AgentOptions
    prompt: str = ""
    command: str | None = None


def parse_cell(line: str, cell: str | None, namespace: dict[str, Any] | None = None) -> AgentCall:
    """Parse ``%%agent LINE`` + ``cell`` (or ``%agent LINE`` when ``cell`` is None).

    Raises ``UsageError`` with a readable message for anything malformed.
    """
    option_text, rest = _split_options(line)
    options = _parse_options(_option_argv(option_text, namespace))
    if cell is None:
        text = rest.strip()
    else:
        if rest.strip():
            raise UsageError(
                f"%%agent takes only options on its first line, not {rest.strip()!r}; "
                "put the prompt in the cell body"
            )
        text = cell.strip()
    if not text:
        raise UsageError(
            "the agent cell has no prompt: write it in the cell body (or after %agent), "
            "or /help for the slash commands"
        )
    if text.startswith("/"):
        return AgentCall(options=options, command=_expand_command(text, namespace))
    return AgentCall(options=options, prompt=text)


def _split_options(line: str) -> tuple[str, str]:
    """Split ``line`` into the leading options and the text after them."""
    expecting_value = False
    for match in _WORD.finditer(line):
        word = match.group()
        if expecting_value:
            expecting_value = False
            continue
        if word == "--":
            return line[: match.start()], line[match.end() :]
        if not word.startswith("-"):
            return line[: match.start()], line[match.start() :]
        expecting_value = word.startswith("--") and "=" not in word and _takes_value(word)
    return line, ""


def _parse_options(argv: list[str]) -> AgentOptions:
    args = agent.parser.parse_args(argv)  # type: ignore[attr-defined]
    if args.new and args.resume:
        raise UsageError("use either --new or --resume SESSION_ID, not both")
    if args.fork and not args.resume:
        raise UsageError("--fork goes with --resume SESSION_ID (it continues a copy of it)")
    if args.max_turns is not None and args.max_turns < 1:
        raise UsageError(f"--max-turns must be at least 1, not {args.max_turns}")
    if args.out is not None and not args.out.isidentifier():
        raise UsageError(f"--out needs a Python variable name, not {args.out!r}")
    return AgentOptions(
        provider=args.provider,
        model=args.model,
        mode=args.mode,
        new=args.new,
        resume=args.resume,
        fork=args.fork,
        agent=args.agent,
        max_turns=args.max_turns,
        background=args.background,
        out=args.out,
    )


# --- expansion: one value per {var} ------------------------------------------------------


class _Holes(DollarFormatter):
    """Expands like IPython but leaves a marker where each value goes, so the
    text is split into words before any value is put back."""

    def __init__(self) -> None:
        super().__init__()
        self.tag = secrets.token_hex(8)
        self.fields: list[str] = []
        self.values: list[str] = []

    def parse(self, fmt_string: str) -> Iterator[tuple[Any, Any, Any, Any]]:
        for literal, field, spec, conversion in super().parse(fmt_string):
            if field is not None:
                self.fields.append(field)
            yield literal, field, spec, conversion

    def format_field(self, value: Any, format_spec: str) -> str:
        self.values.append(super().format_field(value, format_spec))
        return f"\x00{self.tag}:{len(self.values) - 1}\x00"

    def fill(self, word: str) -> str:
        for i, value in enumerate(self.values):
            word = word.replace(f"\x00{self.tag}:{i}\x00", value)
        return word

    def holes_in(self, word: str) -> list[int]:
        return [i for i in range(len(self.values)) if f"\x00{self.tag}:{i}\x00" in word]

    def written(self, word: str) -> str:
        """``word`` as the user wrote it (``{name}`` for each expansion)."""
        for i in self.holes_in(word):
            word = word.replace(f"\x00{self.tag}:{i}\x00", "{" + self.fields[i] + "}")
        return word


def _holes(text: str, namespace: dict[str, Any] | None) -> tuple[str, _Holes]:
    """``text`` with each expansion replaced by a marker, and the formatter
    holding the values; ``text`` as written when it cannot be expanded (as
    IPython leaves it)."""
    holes = _Holes()
    if namespace is None or ("{" not in text and "$" not in text):
        return text, holes
    try:
        return holes.vformat(text, args=[], kwargs=namespace), holes
    except Exception:  # like IPython: what cannot be expanded is left as written
        return text, _Holes()


def _option_argv(text: str, namespace: dict[str, Any] | None) -> list[str]:
    """The parser's arguments for the option text, each option's value joined
    to its name so no value, whatever it holds, can become an option."""
    marked, holes = _holes(text, namespace)
    try:
        words = arg_split(marked, strict=True)
    except ValueError as exc:
        raise UsageError(f"cannot read the options {text.strip()!r}: {exc}") from None
    argv: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=")
        i += 1
        if holes.holes_in(name):
            raise UsageError(
                f"an expansion fills an option's value, never its name: {holes.written(word)!r}"
            )
        if not name.startswith("-") or (not eq and not _takes_value(name)):
            argv.append(word)
            continue
        if not eq:
            if i == len(words):
                argv.append(name)  # the parser says the value is missing
                continue
            value = words[i]
            i += 1
        argv.append(f"{name}={_one_value(name, value, holes)}")
    return argv


def _takes_value(name: str) -> bool:
    """Whether option ``name`` (or an unambiguous abbreviation of one) takes a value."""
    options = agent.parser._option_string_actions  # type: ignore[attr-defined]
    known = [o for o in options if o.startswith(name)]
    exact = name if name in options else (known[0] if len(known) == 1 else None)
    return exact is None or exact not in _FLAGS


def _one_value(option: str, written: str, holes: _Holes) -> str:
    """The value ``written`` for ``option``, its expansions filled in; an
    expanded value must make one value on one line."""
    value = holes.fill(written)
    if not holes.holes_in(written):
        return value
    where = holes.written(written)
    if not value.strip():
        raise UsageError(f"{option} needs a value, but {where} expands to {value!r}")
    bad = next((ch for ch in value if unicodedata.category(ch) in _NOT_IN_A_VALUE), None)
    if bad is not None:
        raise UsageError(
            f"{option} takes one value on one line, but {where} expands to {value!r}, "
            f"which holds {bad!r}"
        )
    return value


#: control and format characters, line and paragraph separators
_NOT_IN_A_VALUE = frozenset({"Cc", "Cf", "Zl", "Zp"})


def _expand_command(text: str, namespace: dict[str, Any] | None) -> str:
    """A slash command with its arguments expanded: never the command's name,
    and each expansion one word (the commands split arguments at spaces)."""
    match = re.match(r"(\S*)(\s*)(.*)\Z", text, re.DOTALL)
    assert match is not None  # matches any text
    name, gap, args = match.groups()
    marked, holes = _holes(args, namespace)
    for field, value in zip(holes.fields, holes.values, strict=True):
        if not value or any(
            ch.isspace() or unicodedata.category(ch) in _NOT_IN_A_VALUE for ch in value
        ):
            raise UsageError(
                f"in {name}, {{{field}}} must expand to one word (no spaces or line breaks), "
                f"not {value!r}; write such text out instead"
            )
    return name + gap + holes.fill(marked)
