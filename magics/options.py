"""The options of ``%%agent`` / ``%agent`` (CONTRACTS.md, Magics) and how a
cell is split into options, prompt and slash command.

Options come first on the magic's line; in the line form the prompt follows
them (``%agent --mode plan explain utils.py``). ``{var}`` and ``$var`` in the
options and in slash commands are expanded from the user namespace, as
IPython does for magics; prompts are taken literally.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.utils.text import DollarFormatter

from mewcode_kernel.core.permission.modes import MODES

__all__ = ["MODES", "AgentCall", "AgentOptions", "agent", "parse_cell"]


#: Options that take no value; every other ``--option`` takes the next word.
_FLAGS = frozenset({"--new", "--background", "--fork"})
_WORD = re.compile(r"\S+")


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
    options = _parse_options(_expand(option_text, namespace))
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
        return AgentCall(options=options, command=_expand(text, namespace))
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
        expecting_value = word.startswith("--") and "=" not in word and word not in _FLAGS
    return line, ""


def _parse_options(text: str) -> AgentOptions:
    args = parse_argstring(agent, text)
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


def _expand(text: str, namespace: dict[str, Any] | None) -> str:
    if namespace is None or ("{" not in text and "$" not in text):
        return text
    try:
        return DollarFormatter().vformat(text, args=[], kwargs=namespace)
    except Exception:  # like IPython: what cannot be expanded is left as written
        return text
