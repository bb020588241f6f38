"""Formatting helpers for the live transcript: key arguments, durations,
token counts, truncation, and the small HTML pieces the parts share.

Colours come from JupyterLab's theme variables (with fallbacks), so the
transcript reads in light and dark themes alike: a coloured text is its
hue mixed with the theme's own text colour (darker on a light theme,
lighter on a dark one), which keeps it at 4.5:1 or more against the page and
the code boxes in both (``tests/test_contrast.py`` computes it). Glyphs are
those the fonts JupyterLab falls back to on Linux carry (``SAFE_GLYPHS``,
checked in a real browser).
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from mewcode_kernel.core.tools import Tool
from mewcode_kernel.core.usage import Usage

__all__ = [
    "BOX_BACKGROUND",
    "BUTTONS",
    "COLORS",
    "MUTED",
    "MUTED_COLOR",
    "SAFE_GLYPHS",
    "duration",
    "esc",
    "key_argument",
    "pre",
    "pretty_json",
    "syntax_color",
    "tokens",
    "truncate",
    "usage_line",
    "whole_seconds",
]

esc = escape


def _readable(hue: str, share: int = 60) -> str:
    """A text colour of ``hue`` (a CSS colour) that reads on the theme's page
    and boxes: ``share`` percent of it mixed with the theme's text colour
    (black or white)."""
    return f"color-mix(in srgb,{hue} {share}%,var(--jp-ui-font-color0,#000))"


def _button(hue: str) -> str:
    """A button background of ``hue`` that white text reads on, in any theme."""
    return f"color-mix(in srgb,{hue} 60%,#000)"


_HUES = {
    "ok": "var(--jp-success-color1,#388e3c)",
    "error": "var(--jp-error-color1,#d32f2f)",
    "warn": "var(--jp-warn-color1,#f57c00)",
    "info": "var(--jp-info-color1,#0097a7)",
}
#: secondary text: the theme's text colour faded into its page, less than
#: ``--jp-ui-font-color2`` (4.49:1 on a light theme's code box)
MUTED_COLOR = "color-mix(in srgb,var(--jp-ui-font-color0,#000) 60%,var(--jp-layout-color0,#fff))"
MUTED = f"color:{MUTED_COLOR}"
COLORS = {name: _readable(hue) for name, hue in _HUES.items()} | {"muted": MUTED_COLOR}
#: button backgrounds (white text) for the cards' CSS and inline styles
BUTTONS = {name: _button(hue) for name, hue in _HUES.items()}
#: the background of code, diffs and output boxes
BOX_BACKGROUND = "var(--jp-cell-editor-background,#f5f5f5)"


def syntax_color(hue: str) -> str:
    """A syntax colour (a light-theme hex) made readable in both themes, also
    on a diff's added and removed tints (more of the text colour than a status)."""
    return _readable(hue, 50)


#: Every non-ASCII character the live transcript may draw. Each is in DejaVu
#: Sans (what JupyterLab's font stack falls back to on Linux);
#: ``tests/test_glyphs.py`` keeps the front end's sources to this set and the
#: browser test checks each renders as itself, not a box.
SAFE_GLYPHS = frozenset("›✓✗⚠■□○●◐◌↶↷↻↪↳→←↑↓⚓⊘ℹ…·–—−×“”‘’«»├└│─┌┐┘┬┴┼▸▾▶◀•≈≤≥±°✎⏎")

# For a tool the session does not know (a call the model made up): the
# arguments that usually say the most.
_GENERIC_KEYS = ("path", "file_path", "command", "pattern", "url", "query", "name", "description")


def key_argument(tool: Tool | None, args: dict[str, Any], limit: int = 80) -> str:
    """The one argument worth showing in a tool row (``""`` if none): the one
    the tool's metadata names, else a usual suspect."""
    value: Any = tool.display(args) if tool is not None else None
    if not value:
        value = next((args[k] for k in _GENERIC_KEYS if isinstance(args.get(k), str)), None)
    if not isinstance(value, str) or not value:
        value = next((v for v in args.values() if isinstance(v, str) and v), "")
    first_line = value.strip().splitlines()[0] if value.strip() else ""
    return truncate(first_line, limit)


def truncate(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    if limit < 40:
        return text[: max(limit - 1, 0)] + "…"
    rest = len(text) - limit
    return f"{text[:limit]}\n… ({rest:,} more characters)"


def duration(seconds: float) -> str:
    if seconds < 0.05:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs} s"


def whole_seconds(seconds: float) -> str:
    """A running time that ticks once a second: ``0 s``, ``12 s``, ``2 min 5 s``."""
    if seconds < 60:
        return f"{int(seconds)} s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes} min {secs} s"


def tokens(n: int) -> str:
    return f"{n:,}"


def pretty_json(value: Any, limit: int = 4000) -> str:
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return truncate(text, limit)


def pre(text: str) -> str:
    """Preformatted text in the notebook's code font, wrapped, height-capped."""
    return (
        '<pre style="margin:2px 0 6px;padding:4px 6px;white-space:pre-wrap;'
        "word-break:break-word;max-height:24em;overflow:auto;"
        f"background:{BOX_BACKGROUND};border-radius:3px;"
        'font-size:var(--jp-code-font-size,12px)">'
        f"{esc(text)}</pre>"
    )


def usage_line(usage: Usage) -> str:
    """``12,345 in · 8,000 cached · 512 out`` (input counts every input token)."""
    return (
        f"{tokens(usage.total_input_tokens)} in · {tokens(usage.cache_read_tokens)} cached · "
        f"{tokens(usage.output_tokens)} out"
    )
