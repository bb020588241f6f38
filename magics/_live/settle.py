"""Live widgets and their static forms.

Every widget MewCode shows is displayed in one output together with its
static form (``live_bundle``: the widget's view, and HTML, Markdown and text
saying what it shows), marked ``STATIC_FORM`` in the output's metadata.
Viewers without the widget's state (nbviewer, GitHub, an untrusted notebook
in JupyterLab) show the static form; ``mewcode_kernel.saved_notebooks``
keeps only the static form when JupyterLab saves (a trusted notebook would
otherwise say "Error displaying widget: model not found" once the kernel is
gone).

A widget that has done its work is replaced by its final static form in
place (``finalize``). Those still live are kept here by kind (``keep``) and
settled when their time comes (``settle``): the "Revert" card when the next
turn starts, all of them when the kernel shuts down or restarts.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

__all__ = ["STATIC_FORM", "Settleable", "forget", "keep", "live_bundle", "live_count", "settle"]

#: the output metadata marking a bundle whose widget view has a static form beside it
STATIC_FORM = {"mewcode": {"static_form": True}}

_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

log = logging.getLogger(__name__)


class Settleable(Protocol):
    def finalize(self) -> int:
        """Replace the live widget by its static form; 1 if it did, 0 if already done."""
        ...


_LIVE: dict[int, tuple[str, Settleable]] = {}


def live_bundle(widget: Any, static: dict[str, Any]) -> dict[str, Any]:
    """The output showing ``widget``, with ``static`` (its HTML, Markdown and
    text) beside its view; the static text replaces the widget's repr."""
    shown = widget._repr_mimebundle_()
    if isinstance(shown, tuple):  # anywidget: (data, metadata)
        shown = shown[0]
    view = shown.get(_WIDGET_VIEW) if isinstance(shown, dict) else None
    if view is None:  # not displayable as a widget: the static form alone
        return dict(static)
    return {**static, _WIDGET_VIEW: view}


def keep(part: Settleable, kind: str) -> None:
    """Remember a live widget until it is finalized or settled."""
    _LIVE[id(part)] = (kind, part)


def forget(part: Settleable) -> None:
    _LIVE.pop(id(part), None)


def live_count(kind: str | None = None) -> int:
    return sum(1 for k, _ in _LIVE.values() if kind is None or k == kind)


def settle(kind: str | None = None) -> int:
    """Finalize the live widgets of ``kind`` (all with ``None``); how many were replaced."""
    chosen = [(key, part) for key, (k, part) in _LIVE.items() if kind is None or k == kind]
    done = 0
    for key, part in chosen:
        _LIVE.pop(key, None)
        try:
            done += part.finalize()
        except Exception:  # one broken widget must not keep the others live
            log.debug("MewCode: settling a %s failed", kind, exc_info=True)
    return done
