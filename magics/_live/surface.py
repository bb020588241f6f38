"""Where the transcript's parts are shown.

``CellSurface`` shows each part as one output of the running cell: a MIME
bundle displayed with a ``display_id`` and replaced in place by
``update_display`` (one IOPub message each), or a widget (its comm messages
update it). Bundles carry ``text/plain`` too, so a saved notebook still
reads without a kernel or widget state.

``BoxSurface`` is for turns that outlive their cell (``--background``): a
front end stops taking a cell's outputs once the cell has finished, but
widget messages reach their views at any time. So the parts live inside one
``VBox`` shown while the cell still runs, each bundle in an ``Output``
widget whose ``outputs`` are set from the kernel (one comm message per
repaint, no echo).
"""

from __future__ import annotations

import uuid
from html import escape
from typing import Any, Protocol

import ipywidgets as w
from ipywidgets import Widget

from .assets import StyleCarrier, ours
from .fmt import MUTED
from .markdown import markdown_html
from .settle import STATIC_FORM, live_bundle

__all__ = ["BoxSurface", "Bundle", "CellSurface", "Surface", "joined"]

Bundle = dict[str, Any]
"""A MIME bundle: ``{"text/markdown": ..., "text/plain": ...}``."""


class Surface(Protocol):
    def show(
        self,
        content: Bundle | Widget,
        *,
        metadata: dict[str, Any] | None = None,
        static: Bundle | None = None,
    ) -> Any:
        """Append ``content`` as a new output; return a handle for ``update``.
        A widget comes with ``static``, its static form (see ``settle``)."""
        ...

    def update(self, handle: Any, content: Bundle) -> None:
        """Replace the bundle shown under ``handle``."""
        ...


class CellSurface:
    """The outputs of the cell that is running (IPython's display machinery)."""

    def show(
        self,
        content: Bundle | Widget,
        *,
        metadata: dict[str, Any] | None = None,
        static: Bundle | None = None,
    ) -> str:
        from IPython.display import display

        display_id = uuid.uuid4().hex
        if isinstance(content, Widget):
            bundle = live_bundle(content, static or {"text/plain": ""})
            display(bundle, raw=True, metadata=STATIC_FORM, display_id=display_id)
        else:
            display(content, raw=True, metadata=metadata, display_id=display_id)
        return display_id

    def update(self, handle: str, content: Bundle) -> None:
        from IPython.display import update_display

        update_display(content, raw=True, display_id=handle)


class BoxSurface:
    """Parts as children of one ``VBox`` (``box``), which is displayed at once."""

    def __init__(self, surface: Surface | None = None) -> None:
        self._layout = w.Layout()  # one Layout model shared by every Output
        self.box = w.VBox([StyleCarrier()])
        self.box.add_class("mewcode-background")
        ours(self.box)
        self._outer = surface or CellSurface()
        self._handle = self._outer.show(self.box, static=_RUNNING)
        self.settled = False

    def show(
        self,
        content: Bundle | Widget,
        *,
        metadata: dict[str, Any] | None = None,
        static: Bundle | None = None,
    ) -> Widget:
        if isinstance(content, Widget):
            child = content
        else:
            child = w.Output(layout=self._layout, outputs=(_output(content, metadata),))
            ours(child)
        self.box.children = (*self.box.children, child)
        return child

    def update(self, handle: Widget, content: Bundle) -> None:
        if isinstance(handle, w.Output):
            handle.outputs = (_output(content, None),)
            return
        # a widget shown here is replaced by its static form
        static = w.Output(layout=self._layout, outputs=(_output(content, None),))
        ours(static)
        self.box.children = tuple(static if c is handle else c for c in self.box.children)

    def finalize(self) -> int:
        """The turn is over: the whole box gives way to its transcript as one
        static output (widgets inside were replaced by their static forms)."""
        if self.settled:
            return 0
        self.settled = True
        self._outer.update(self._handle, joined(self._bundles()))
        for child in self.box.children:
            child.close()
        self.box.close()
        return 1

    def _bundles(self) -> list[Bundle]:
        out = []
        for child in self.box.children:
            outputs = getattr(child, "outputs", ())
            out += [o.get("data", {}) for o in outputs if isinstance(o, dict)]
        return out


_RUNNING: Bundle = {
    "text/html": f'<div style="{MUTED}">'
    "a background turn ran here; its transcript is in its session (/resume)</div>",
    "text/plain": "a background turn ran here; its transcript is in its session (/resume)",
}


def joined(bundles: list[Bundle]) -> Bundle:
    """Several outputs as one: HTML (Markdown shown safely), Markdown and text."""
    html, markdown, plain = [], [], []
    for bundle in bundles:
        text = bundle.get("text/plain", "")
        if "text/html" in bundle:
            html.append(bundle["text/html"])
        elif bundle.get("text/markdown"):
            html.append(markdown_html(bundle["text/markdown"]))
        elif text:
            html.append(f"<pre>{escape(text)}</pre>")
        markdown.append(bundle.get("text/markdown") or text)
        plain.append(text)
    return {
        "text/html": "".join(html),
        "text/markdown": "\n\n".join(m for m in markdown if m),
        "text/plain": "\n".join(p for p in plain if p),
    }


def _output(content: Bundle, metadata: dict[str, Any] | None) -> dict[str, Any]:
    return {"output_type": "display_data", "data": content, "metadata": metadata or {}}
