"""The input transformer that lets an agent cell run as top-level ``await``.

A cell magic cannot await, and the turn must run on the kernel's own event
loop (so widget clicks arrive while it waits). IPython's cleanup transformers
run before its magic handling, so a cell starting with ``%%agent`` (or
``%agent``) is rewritten here into one awaited call, which IPython then runs
with its autoawait machinery::

    %%agent --mode plan             await __import__("magics.controller", ...)
    what does utils.py do?    ->        .run_cell(get_ipython(), '--mode plan', 'what does ...')

``%%agent?`` / ``%agent?`` (help) and cells that merely mention the magic
further down are left alone.

In the ``mewcode`` kernel a cell whose first line is a slash command
(``/help``, ``/cost``, ``/resume 2026``...) is the same as ``%%agent`` + that
cell (``slash_cell_transformer``); without it IPython would read ``/help`` as
its autocall syntax and open Python's ``help()``.
"""

from __future__ import annotations

import re

__all__ = ["agent_cell_transformer", "rewrite", "rewrite_slash", "slash_cell_transformer"]

_CELL = re.compile(r"^%%agent(?=\s|$)(?P<line>[^\n]*)\n?(?P<body>.*)\Z", re.DOTALL)
_LINE = re.compile(r"^%agent(?=\s|$)(?P<line>[^\n]*)\n?(?P<rest>.*)\Z", re.DOTALL)
_SLASH = re.compile(r"^/[A-Za-z][\w.:-]*(?=\s|$)")
_CALL = (
    'await __import__("magics.controller", fromlist=["run_cell"])'
    '.run_cell(__import__("IPython").get_ipython(), {line!r}, {body!r})\n'
)


def rewrite(cell: str) -> str | None:
    """The awaited call for an agent cell, or ``None`` if ``cell`` is not one."""
    match = _CELL.match(cell)
    if match is not None:
        return _CALL.format(line=match["line"].strip(), body=match["body"])
    match = _LINE.match(cell)
    if match is not None and not match["rest"].strip():
        return _CALL.format(line=match["line"].strip(), body=None)
    return None


def agent_cell_transformer(lines: list[str]) -> list[str]:
    """An IPython cleanup transformer (``shell.input_transformers_cleanup``)."""
    if not lines or not lines[0].startswith("%"):
        return lines
    rewritten = rewrite("".join(lines))
    return lines if rewritten is None else [rewritten]


# IPython's ``check_complete`` (``is_complete`` for terminal front ends) skips
# transformers marked so: an agent cell is then judged as the cell magic it
# is, complete at a blank line, instead of as the one-line call it becomes
# (which would end ``%%agent`` + Enter before its prompt is typed).
agent_cell_transformer.has_side_effects = True  # type: ignore[attr-defined]


def rewrite_slash(cell: str) -> str | None:
    """The awaited call for a cell whose first line is a slash command, else ``None``."""
    if _SLASH.match(cell) is None:
        return None
    return _CALL.format(line="", body=cell)


def slash_cell_transformer(lines: list[str]) -> list[str]:
    """A cleanup transformer registered in the ``mewcode`` kernel only."""
    if not lines or not lines[0].startswith("/"):
        return lines
    rewritten = rewrite_slash("".join(lines))
    return lines if rewritten is None else [rewritten]
