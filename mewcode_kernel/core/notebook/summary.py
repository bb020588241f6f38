"""A notebook's cells as the model reads them (``notebook_read``) and a
cell's outputs after a run (``notebook_run``).

Each cell is shown with its index, id, type and execution count, its source
whole (up to ``SOURCE_CHARS``), and its outputs summarised: stream text and
``text/plain`` results bounded, errors as name, value and the end of the
traceback, images as image blocks (at most ``MAX_IMAGES`` a result; the
rest are named), other rich outputs by type. The outputs of MewCode's own
agent cells are one line each, never their widget JSON. When the whole
notebook does not fit ``BUDGET`` characters, the cells past it are listed
one line each. ``redact`` takes secrets out of every text shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..messages import ImageBlock, TextBlock
from .document import cell_source
from .images import image_for_model

__all__ = [
    "BUDGET",
    "MAX_IMAGES",
    "Summary",
    "describe_cells",
    "describe_outputs",
    "is_agent_cell",
]

BUDGET = 60_000
SOURCE_CHARS = 20_000
OUTPUT_CHARS = 2_000
MAX_IMAGES = 8
MAX_LISTED = 400
_TRACEBACK_LINES = 12
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_AGENT = re.compile(r"\s*(?:%%?agent(?:\s|$)|/[A-Za-z][\w.:-]*(?:\s|$))")
_WIDGET = "application/vnd.jupyter.widget-view+json"
Redact = Callable[[str], str]


def is_agent_cell(source: str) -> bool:
    """Whether ``source`` is a MewCode agent cell (``%%agent``, ``%agent``, ``/command``)."""
    return _AGENT.match(source) is not None


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _bounded(text: str, limit: int) -> str:
    text = _ANSI.sub("", text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit:,} more characters]"


@dataclass(kw_only=True)
class Summary:
    """Parts being collected: text lines and images, within the limits."""

    redact: Redact
    images_left: int = MAX_IMAGES
    lines: list[str] = field(default_factory=list)
    parts: list[TextBlock | ImageBlock] = field(default_factory=list)
    images_named: int = 0
    _size: int = 0

    def add(self, line: str) -> None:
        self.lines.append(line)
        self._size += len(line)

    def image(self, mime: str, data: Any, note: str) -> None:
        if self.images_left <= 0:
            self.images_named += 1
            self.add(f"[{mime} image ({note}): not shown, {MAX_IMAGES} images a result at most; "
                     "read that cell alone to see it]")  # fmt: skip
            return
        got = image_for_model(mime, data, note)
        if isinstance(got, str):
            self.add(got)
            return
        self.images_left -= 1
        self.add(f"[{mime} image ({got.note}): attached below]")
        self.flush()
        self.parts.append(got)

    def flush(self) -> None:
        # redacted a block at a time, not line by line: one scan for secrets
        # per block keeps a 200-cell read fast
        if self.lines:
            self.parts.append(TextBlock(text=self.redact("\n".join(self.lines))))
            self.lines = []

    def size(self) -> int:
        return self._size

    def done(self) -> list[TextBlock | ImageBlock]:
        self.flush()
        return self.parts


def describe_outputs(out: Summary, outputs: Sequence[Any], where: str, *, agent: bool) -> None:
    """Add the outputs of one cell (``where`` names it in image notes)."""
    for n, output in enumerate(outputs):
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        data = output.get("data") if isinstance(output.get("data"), dict) else {}
        if agent or _WIDGET in data or "mewcode" in (output.get("metadata") or {}):
            first = (_text(output.get("text")) or _text(data.get("text/plain"))).strip()
            first = first.splitlines()[0] if first else f"({kind})"
            out.add(f"[agent output] {first[:200]}")
            continue
        if kind == "stream":
            name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stream"
            out.add(f"[{name}]\n{_bounded(_text(output.get('text')), OUTPUT_CHARS)}")
        elif kind == "error":
            ename, evalue = str(output.get("ename", ""))[:200], str(output.get("evalue", ""))
            tb = output.get("traceback") if isinstance(output.get("traceback"), list) else []
            lines = _ANSI.sub("", "\n".join(str(x) for x in tb)).splitlines()
            tail = "\n".join(lines[-_TRACEBACK_LINES:])
            out.add(f"[error] {ename}: {_bounded(evalue, 500)}\n{_bounded(tail, OUTPUT_CHARS)}")
        elif kind in ("execute_result", "display_data"):
            label = "result" if kind == "execute_result" else "display"
            shown = False
            for mime in ("image/png", "image/jpeg"):
                if mime in data:
                    out.image(mime, data[mime], f"{where}, output {n}")
                    shown = True
            text = _text(data.get("text/plain"))
            if text and not (shown and text.startswith("<")):
                out.add(f"[{label}]\n{_bounded(text, OUTPUT_CHARS)}")
            elif not shown:
                kinds = ", ".join(sorted(str(k) for k in data)) or "nothing"
                out.add(f"[{label}: {kinds}]")


def describe_cells(
    cells: Sequence[dict[str, Any]],
    *,
    heading: str,
    redact: Redact,
    selected: str | None = None,
    source: Callable[[dict[str, Any]], str] | None = None,
    start: int = 0,
) -> list[TextBlock | ImageBlock]:
    """The cells for the model (see the module docstring). ``source`` gives
    the text shown for a cell's source (default: the source itself);
    ``start``: the notebook index of the first of ``cells``."""
    shown_source = source or cell_source
    out = Summary(redact=redact)
    out.add(heading)
    listed = unlisted = 0
    for n, cell in enumerate(cells, start):
        cid = str(cell.get("id") or f"cell-{n}")
        kind = str(cell.get("cell_type"))
        count = cell.get("execution_count")
        mark = ' selected="true"' if cid == selected else ""
        tag = f'<cell index="{n}" id="{cid}" type="{kind}"'
        tag += f' execution_count="{count}"' if isinstance(count, int) else ""
        text = shown_source(cell)
        if out.size() > BUDGET:
            if listed < MAX_LISTED:
                first = text.strip().splitlines()[0][:80] if text.strip() else ""
                out.add(f'{tag}{mark} not_shown="budget"/> {first}')
                listed += 1
            else:
                unlisted += 1
            continue
        out.add(f"{tag}{mark}>\n{_bounded(text, SOURCE_CHARS)}")
        outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
        if outputs:
            out.add("<outputs>")
            describe_outputs(out, outputs, f"cell {n}", agent=is_agent_cell(cell_source(cell)))
            out.add("</outputs>")
        out.add("</cell>")
    if unlisted:
        out.add(f"… {unlisted} more cells not listed ({len(cells)} in all): read one with cell_id")
    if listed:
        out.add(f"({listed} cells past the size budget are listed by their first line; read "
                "one with cell_id to see it whole)")  # fmt: skip
    return out.done()
