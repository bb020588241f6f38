"""The cards' front-end code: each card's module and stylesheet in
``static/``, with the shared ``common.js`` / ``common.css`` put in front
(anywidget takes one module and one stylesheet per widget), and the base
class every card widget shares: its ``offline`` HTML, what the card shows
once the kernel is gone (see ``common.js``). Plain ipywidgets MewCode shows
(a background turn's box, the thinking) are marked as MewCode's (``ours``)
and carry the shared stylesheet with them (``StyleCarrier``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import anywidget
import traitlets as t

__all__ = ["LiveWidget", "StyleCarrier", "css", "esm", "ours"]

_STATIC = Path(__file__).with_name("static")


@cache
def esm(name: str) -> str:
    """``common.js`` followed by ``static/<name>.js`` (which ends in ``export default``)."""
    return (_STATIC / "common.js").read_text() + "\n" + (_STATIC / f"{name}.js").read_text()


@cache
def css(name: str | None = None) -> str:
    """``common.css`` followed by ``static/<name>.css`` (if a name is given)."""
    shared = (_STATIC / "common.css").read_text()
    return shared if name is None else shared + "\n" + (_STATIC / f"{name}.css").read_text()


class LiveWidget(anywidget.AnyWidget):
    """A MewCode card. ``offline``: its HTML once the kernel is gone."""

    offline = t.Unicode("").tag(sync=True)


class StyleCarrier(anywidget.AnyWidget):
    """Invisible; brings ``common.css`` along with plain ipywidgets."""

    _esm = esm("carrier")
    _css = css()


def ours(*widgets: Any) -> None:
    """Mark plain ipywidgets as MewCode's, for the shared stylesheet (no
    broken-link icon once the kernel is gone)."""
    for widget in widgets:
        widget.add_class("mewcode-widget")
