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
from collections.abc import Callable
from typing import Any, Protocol

import ipywidgets as w
from ipywidgets import Widget

__all__ = ["BoxSurface", "Bundle", "CellSurface", "Surface"]

Bundle = dict[str, Any]
"""A MIME bundle: ``{"text/markdown": ..., "text/plain": ...}``."""


class Surface(Protocol):
    def show(self, content: Bundle | Widget, *, metadata: dict[str, Any] | None = None) -> Any:
        """Append ``content`` as a new output; return a handle for ``update``."""
        ...

    def update(self, handle: Any, content: Bundle) -> None:
        """Replace the bundle shown under ``handle``."""
        ...


class CellSurface:
    """The outputs of the cell that is running (IPython's display machinery)."""

    def show(self, content: Bundle | Widget, *, metadata: dict[str, Any] | None = None) -> str:
        from IPython.display import display

        display_id = uuid.uuid4().hex
        if isinstance(content, Widget):
            display(content, display_id=display_id)
        else:
            display(content, raw=True, metadata=metadata, display_id=display_id)
        return display_id

    def update(self, handle: str, content: Bundle) -> None:
        from IPython.display import update_display

        update_display(content, raw=True, display_id=handle)


class BoxSurface:
    """Parts as children of one ``VBox`` (``box``), which is displayed at once."""

    def __init__(self, show: Callable[[Widget], object] | None = None) -> None:
        self._layout = w.Layout()  # one Layout model shared by every Output
        self.box = w.VBox()
        (show or CellSurface().show)(self.box)

    def show(self, content: Bundle | Widget, *, metadata: dict[str, Any] | None = None) -> Widget:
        if isinstance(content, Widget):
            child = content
        else:
            child = w.Output(layout=self._layout, outputs=(_output(content, metadata),))
        self.box.children = (*self.box.children, child)
        return child

    def update(self, handle: Widget, content: Bundle) -> None:
        if isinstance(handle, w.Output):
            handle.outputs = (_output(content, None),)
            return
        # a widget shown here is replaced by its static form
        static = w.Output(layout=self._layout, outputs=(_output(content, None),))
        self.box.children = tuple(static if c is handle else c for c in self.box.children)


def _output(content: Bundle, metadata: dict[str, Any] | None) -> dict[str, Any]:
    return {"output_type": "display_data", "data": content, "metadata": metadata or {}}
