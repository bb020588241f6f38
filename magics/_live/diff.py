"""A file change drawn as a unified diff with syntax colours: pure, no I/O.

``render_change(path, before, after)`` gives a one-line summary (``new file ·
12 lines``, ``overwrite 30 lines · +3 −2``, ``+3 −2``), the diff as HTML (each
line highlighted for the file's language, added and removed lines tinted,
long diffs folded under a ``<details>``) and as Markdown (a fenced ``diff``
block, which GitHub and nbviewer colour). Colours are inline styles, so the
HTML reads the same in a saved notebook without any stylesheet.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from typing import Any

from .fmt import BOX_BACKGROUND, MUTED, syntax_color

__all__ = [
    "ADDED_TINT",
    "FOLD_AFTER",
    "REMOVED_TINT",
    "TOKEN_COLOURS",
    "ChangeView",
    "highlight_code",
    "render_change",
]

FOLD_AFTER = 60
"""Diff lines shown before the rest is folded away."""
_MARKDOWN_LINES = 400
_MAX_HIGHLIGHT = 200_000  # characters; larger texts are shown uncoloured
_CONTEXT = 3

# Inline styles kept short: a diff line costs a few bytes more than its text.
ADDED_TINT = "background:#2ea04330"
REMOVED_TINT = "background:#f8514930"
_ADDED = f' style="{ADDED_TINT}"'
_REMOVED = f' style="{REMOVED_TINT}"'
_HUNK = f' style="{MUTED};background:#8881"'
_BOX = (
    "margin:2px 0 6px;padding:4px 6px;overflow:auto;max-height:32em;white-space:pre;"
    f"background:{BOX_BACKGROUND};border-radius:3px;"
    "font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,12px);"
    "line-height:1.35"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class ChangeView:
    summary: str
    html: str
    markdown: str
    added: int
    removed: int


def render_change(
    path: str,
    before: str | None,
    after: str,
    *,
    whole_file: bool = False,
    label: str | None = None,
    syntax: str | None = None,
) -> ChangeView:
    """The change of ``path`` from ``before`` (``None``: the file is new) to
    ``after``. ``whole_file``: the change replaces the file (a write), so the
    summary says how many lines it overwrites. ``label``: the part of the
    file it changes (a notebook cell: ``new code cell 3``, ``deleted cell
    2``, ``moved cell from 2 to 5``), said first; ``syntax``: a file name
    whose language colours the text instead of ``path``'s."""
    old = _lines(before or "")
    new = _lines(after)
    rows = _diff_rows(old, new)
    added = sum(1 for kind, *_ in rows if kind == "+")
    removed = sum(1 for kind, *_ in rows if kind == "-")
    counts = f"+{added} −{removed}"
    if label is not None:
        summary = f"{label} · {_n_lines(len(new))}" if before is None else f"{label} · {counts}"
        if label.startswith("deleted"):
            summary = f"{label} · {_n_lines(len(old))}"
        elif label.startswith("moved"):
            summary = label
    elif before is None:
        summary = f"new file · {_n_lines(len(new))}"
    elif whole_file:
        summary = f"overwrite {_n_lines(len(old))} · {counts}"
    else:
        summary = counts
    if not rows and not (label or "").startswith("moved"):
        summary += " · no change"
    old_html = _highlight(syntax or path, before or "", len(old))
    new_html = _highlight(syntax or path, after, len(new))
    drawn = [_row_html(row, old_html, new_html) for row in rows]
    html = "".join(drawn[:FOLD_AFTER])
    if len(drawn) > FOLD_AFTER:
        rest = len(drawn) - FOLD_AFTER
        html += (
            f'<details><summary style="cursor:pointer;{MUTED}">… {rest} more diff lines'
            f"</summary>{''.join(drawn[FOLD_AFTER:])}</details>"
        )
    html = f'<div class="mewcode-diff" style="{_BOX}">{html}</div>' if rows else ""
    return ChangeView(
        summary=summary,
        html=html,
        markdown=_markdown(rows, old, new),
        added=added,
        removed=removed,
    )


def _n_lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def _lines(text: str) -> list[str]:
    return text.splitlines()


Row = tuple[str, int, int, int, int]
"""(kind, old index, new index, old length, new length): kind ``@`` is a hunk
header (the lengths are its span), `` ``/``-``/``+`` a context, removed or
added line (lengths unused)."""


def _diff_rows(old: list[str], new: list[str]) -> list[Row]:
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for group in matcher.get_grouped_opcodes(_CONTEXT):
        first, last = group[0], group[-1]
        rows.append(("@", first[1], first[3], last[2] - first[1], last[4] - first[3]))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [(" ", i, j1 + (i - i1), 0, 0) for i in range(i1, i2)]
                continue
            if tag in ("replace", "delete"):
                rows += [("-", i, -1, 0, 0) for i in range(i1, i2)]
            if tag in ("replace", "insert"):
                rows += [("+", -1, j, 0, 0) for j in range(j1, j2)]
    return rows


def _hunk_header(row: Row) -> str:
    _, old_start, new_start, old_len, new_len = row
    old_from = old_start + 1 if old_len else old_start  # as diff -u: "-0,0" for nothing
    new_from = new_start + 1 if new_len else new_start
    return f"@@ -{old_from},{old_len} +{new_from},{new_len} @@"


def _row_html(row: Row, old_html: list[str], new_html: list[str]) -> str:
    kind = row[0]
    if kind == "@":
        return f"<div{_HUNK}>{escape(_hunk_header(row))}</div>"
    if kind == "-":
        return f"<div{_REMOVED}>−{old_html[row[1]]}</div>"
    if kind == "+":
        return f"<div{_ADDED}>+{new_html[row[2]]}</div>"
    return f"<div> {new_html[row[2]]}</div>"


def _markdown(rows: list[Row], old: list[str], new: list[str]) -> str:
    if not rows:
        return ""
    out: list[str] = []
    for row in rows[:_MARKDOWN_LINES]:
        kind, i, j = row[:3]
        if kind == "@":
            out.append(_hunk_header(row))
        elif kind == "-":
            out.append("-" + old[i])
        elif kind == "+":
            out.append("+" + new[j])
        else:
            out.append(" " + new[j])
    if len(rows) > _MARKDOWN_LINES:
        out.append(f"… {len(rows) - _MARKDOWN_LINES} more diff lines")
    body = "\n".join(out)
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{fence}diff\n{body}\n{fence}"


# Colours for a few token families (the rest stays plain), each mixed with
# the theme's text colour so it reads on light and dark themes; checked in order.
TOKEN_COLOURS = tuple(
    (family, f"color:{syntax_color(hue)}" + (";font-style:italic" if family == "Comment" else ""))
    for family, hue in (
        ("Comment", "#6a737d"),
        ("Literal.String", "#22863a"),
        ("Literal.Number", "#1a73c8"),
        ("Keyword", "#cf222e"),
        ("Operator.Word", "#cf222e"),
        ("Name.Builtin", "#8250df"),
        ("Name.Function", "#8250df"),
        ("Name.Class", "#8250df"),
        ("Name.Decorator", "#8250df"),
    )
)


def _highlight(path: str, text: str, n_lines: int) -> list[str]:
    """``text`` as HTML, one entry per line, coloured for ``path``'s language."""
    plain = [escape(line) for line in text.splitlines()]
    if not text or len(text) > _MAX_HIGHLIGHT:
        return plain
    lexer = _lexer_for(path)
    if lexer is None:
        return plain
    coloured = _coloured_lines(lexer, text)
    if len(coloured) < n_lines:
        return plain
    return coloured[:n_lines]


def _coloured_lines(lexer: Any, text: str) -> list[str]:
    lines: list[list[tuple[str, str]]] = [[]]
    for token_type, value in lexer.get_tokens(text):
        style = _style_of(token_type)
        for k, part in enumerate(value.split("\n")):
            if k:
                lines.append([])
            if part:
                line = lines[-1]
                if line and line[-1][0] == style:
                    line[-1] = (style, line[-1][1] + part)
                else:
                    line.append((style, part))
    return [
        "".join(f'<span style="{st}">{escape(v)}</span>' if st else escape(v) for st, v in line)
        for line in lines
    ]


@lru_cache(maxsize=512)
def _style_of(token_type: Any) -> str:
    name = str(token_type).removeprefix("Token.")
    for family, style in TOKEN_COLOURS:
        if name == family or name.startswith(family + "."):
            return style
    return ""


@lru_cache(maxsize=64)
def _lexer_for(path: str) -> Any:
    try:
        from pygments.lexers import get_lexer_for_filename
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - pygments comes with IPython
        return None
    try:
        return get_lexer_for_filename(path, stripnl=False, stripall=False, ensurenl=True)
    except ClassNotFound:
        return None


def highlight_code(code: str, language: str) -> str:
    """``code`` as coloured HTML for ``language`` (a Pygments lexer name)."""
    try:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover
        return escape(code)
    try:
        lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return escape(code)
    return "\n".join(_coloured_lines(lexer, code))
