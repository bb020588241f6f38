"""A stand-in for the notebook front end, for testing the widget renderer.

``FakeCell`` is a ``Surface``: it keeps the outputs a notebook would show for
one cell (updates replace an output in place) and logs every display and
update with its time. ``CommLog`` records the comm messages widgets send
(open and state updates), the way ipywidgets' own tests capture sent state,
and lets a test act as the front end: ``click`` and ``type_into`` deliver the
messages a browser would send.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as w
from comm.base_comm import BaseComm


@dataclass
class Output:
    content: dict[str, Any] | w.Widget
    metadata: dict[str, Any] | None = None
    updates: int = 0
    #: a widget's static form, shown beside its view (what a saved notebook keeps)
    static: dict[str, Any] | None = None

    @property
    def widget(self) -> w.Widget | None:
        return self.content if isinstance(self.content, w.Widget) else None

    @property
    def plain(self) -> str:
        return "" if self.widget is not None else self.content.get("text/plain", "")


@dataclass
class FakeCell:
    outputs: list[Output] = field(default_factory=list)
    #: (monotonic time, "display" | "update", output index)
    log: list[tuple[float, str, int]] = field(default_factory=list)
    _changed: asyncio.Event | None = None

    def show(
        self,
        content: Any,
        *,
        metadata: dict[str, Any] | None = None,
        static: dict[str, Any] | None = None,
    ) -> int:
        self.outputs.append(Output(content, metadata, static=static))
        self._note("display", len(self.outputs) - 1)
        return len(self.outputs) - 1

    def update(self, handle: int, content: dict[str, Any]) -> None:
        self.outputs[handle].content = content
        self.outputs[handle].updates += 1
        self._note("update", handle)

    def _note(self, kind: str, index: int) -> None:
        self.log.append((time.monotonic(), kind, index))
        if self._changed is not None:
            self._changed.set()

    async def wait_for(self, predicate: Callable[[FakeCell], Any], within: float = 5.0) -> Any:
        """Wait (bounded) until ``predicate(self)`` is truthy after some output changed."""
        self._changed = self._changed or asyncio.Event()
        async with asyncio.timeout(within):
            while not (found := predicate(self)):
                self._changed.clear()
                await self._changed.wait()
        return found

    # --- what a person sees ------------------------------------------------------

    @property
    def markdown(self) -> str:
        """The answer: every output of the answer's text (Markdown, shown as safe
        HTML of class ``mewcode-answer``), joined; not the rows, cards or lines
        that carry Markdown beside their HTML."""
        return "".join(
            o.content["text/markdown"]
            for o in self.outputs
            if o.widget is None
            and "text/markdown" in o.content
            and 'class="mewcode-answer"' in o.content.get("text/html", 'class="mewcode-answer"')
        )

    def rows(self) -> list[str]:
        """The tool rows, as their one-line text."""
        return [
            o.plain
            for o in self.outputs
            if o.widget is None and 'class="mewcode-tool"' in o.content.get("text/html", "")
        ]

    def row_html(self, index: int) -> str:
        rows = [o for o in self.outputs if 'class="mewcode-tool"' in _html(o)]
        return rows[index].content["text/html"]

    def widgets(self, kind: type[w.Widget]) -> list[Any]:
        return [o.widget for o in self.outputs if isinstance(o.widget, kind)]

    def cards(self) -> list[Any]:
        """Approval cards still shown as widgets (``CardWidget``)."""
        from magics._live.card import CardWidget

        return self.widgets(CardWidget)

    def statics(self, css_class: str) -> list[dict[str, Any]]:
        """Static outputs (bundles) whose HTML has ``css_class``: e.g. decided cards
        (``mewcode-approval``) after the turn finished."""
        return [
            o.content
            for o in self.outputs
            if o.widget is None and css_class in o.content.get("text/html", "")
        ]

    def plain_lines(self) -> list[str]:
        return [o.plain for o in self.outputs if o.widget is None]


def _html(o: Output) -> str:
    return "" if o.widget is not None else o.content.get("text/html", "")


def decide(card: Any, choice: str, note: str = "", save: bool = False) -> None:
    """Deliver the message the card's view sends on a click: the choice with the
    note and the save box as they are at that moment."""
    content = {"event": "decide", "choice": choice, "note": note, "save": save}
    card._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


class RecordingComm(BaseComm):
    """A comm that records what it would publish on IOPub."""

    log: list[tuple[float, str, str, Any]]

    def __init__(self, log: list[tuple[float, str, str, Any]], **kwargs: Any) -> None:
        self.log = log
        super().__init__(**kwargs)

    def publish_msg(
        self,
        msg_type: str,
        data: Any = None,
        metadata: Any = None,
        buffers: Any = None,
        **keys: Any,
    ) -> None:
        self.log.append((time.monotonic(), msg_type, self.comm_id, data))


class CommLog:
    """Every comm message widgets sent: ``(time, msg_type, comm_id, data)``."""

    def __init__(self) -> None:
        self.messages: list[tuple[float, str, str, Any]] = []

    def create_comm(self, **kwargs: Any) -> RecordingComm:
        return RecordingComm(self.messages, **kwargs)

    def updates_of(self, widget: w.Widget) -> list[dict[str, Any]]:
        return [
            d["state"]
            for _, kind, cid, d in self.messages
            if kind == "comm_msg" and cid == widget.model_id and d.get("method") == "update"
        ]


def click(button: w.Button) -> None:
    """Deliver the message a browser sends when the button is clicked."""
    button._handle_msg(
        {"content": {"data": {"method": "custom", "content": {"event": "click"}}}, "buffers": []}
    )


def type_into(widget: w.Widget, value: Any, trait: str = "value") -> None:
    """Deliver the state update a browser sends when someone types into ``widget``."""
    widget._handle_msg(
        {"content": {"data": {"method": "update", "state": {trait: value}}}, "buffers": []}
    )
