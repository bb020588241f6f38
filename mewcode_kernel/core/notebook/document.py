"""A notebook file as text: parsed, checked, and written back with every
byte of what an edit did not touch kept as it was.

``NotebookFile.parse(data, shown)`` reads an ``.ipynb`` (nbformat 4) and
finds where each cell's JSON sits in the text; ``render(cells)`` writes a
new list of cells back, copying an untouched cell's text as it was (same
bytes, key order, indentation, escapes) and writing a changed or new cell in
the file's own indentation, so a diff of the file shows only what changed.
A notebook without cell ids (nbformat < 4.5) gets ids on its first edit, as
JupyterLab gives them; that one rewrite is whole.

A file that is not JSON (truncated, damaged), not a notebook, or larger
than ``MAX_NOTEBOOK_BYTES`` raises ``NotebookError`` with a sentence to
show the model.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CELL_TYPES",
    "MAX_NOTEBOOK_BYTES",
    "NotebookError",
    "NotebookFile",
    "cell_id",
    "cell_source",
    "disk_cell",
    "disk_output",
    "new_cell",
    "new_cell_id",
]

MAX_NOTEBOOK_BYTES = 100_000_000
"""Larger notebooks are not read (a 50 MB output still is)."""
CELL_TYPES = ("code", "markdown", "raw")
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
# a JSON string (escapes unrolled: linear on a 50 MB base64 string) or a bracket
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
# text mime types nbformat stores as a list of lines
_LINES_MIME = ("text/", "application/javascript", "image/svg+xml")


class NotebookError(ValueError):
    """The file cannot be used as a notebook; the message says why."""


def cell_source(cell: dict[str, Any]) -> str:
    """A cell's source as one string (nbformat stores it as a string or lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def cell_id(cell: dict[str, Any], index: int) -> str:
    """The cell's id, or ``cell-<index>`` for a cell without one (nbformat < 4.5)."""
    value = cell.get("id")
    return value if isinstance(value, str) and value else f"cell-{index}"


def new_cell_id(taken: Iterable[str], seed: str) -> str:
    """A fresh id, derived from ``seed`` (so a replayed run makes the same one)."""
    used = set(taken)
    for n in range(10_000):
        candidate = hashlib.sha256(f"{seed}\0{n}".encode()).hexdigest()[:8]
        if candidate not in used:
            return candidate
    raise NotebookError("no free cell id")  # pragma: no cover - 10 000 collisions


def new_cell(cell_type: str, source: str, cell_id: str) -> dict[str, Any]:
    """A new cell of ``cell_type`` as nbformat 4.5 writes it."""
    cell: dict[str, Any] = {"cell_type": cell_type}
    if cell_type == "code":
        cell["execution_count"] = None
    cell["id"] = cell_id
    cell["metadata"] = {}
    if cell_type == "code":
        cell["outputs"] = []
    cell["source"] = source
    return cell


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def disk_output(output: dict[str, Any]) -> dict[str, Any]:
    """An output as nbformat writes it: multi-line text as a list of lines."""
    out = dict(output)
    if isinstance(out.get("text"), str):
        out["text"] = _lines(out["text"])
    data = out.get("data")
    if isinstance(data, dict):
        out["data"] = {
            k: _lines(v) if isinstance(v, str) and k.startswith(_LINES_MIME) else v
            for k, v in data.items()
        }
    return out


def disk_cell(cell: dict[str, Any], *, as_lines: bool = True) -> dict[str, Any]:
    """``cell`` with its source (and outputs) in nbformat's on-disk shape."""
    out = dict(cell)
    source = cell_source(cell)
    out["source"] = _lines(source) if as_lines else source
    if isinstance(out.get("outputs"), list):
        out["outputs"] = [disk_output(o) for o in out["outputs"] if isinstance(o, dict)]
    return out


def _check_cells(data: Any, shown: str) -> list[dict[str, Any]]:
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError(f"{shown} is not a Jupyter notebook (no list of cells)")
    if data.get("nbformat") != 4:
        raise NotebookError(
            f"{shown} is not an nbformat 4 notebook (nbformat {data.get('nbformat')!r})"
        )
    cells: list[dict[str, Any]] = data["cells"]
    for n, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in CELL_TYPES:
            raise NotebookError(f"{shown}: cell {n} is damaged (no valid cell_type)")
        source = cell.get("source", "")
        if not isinstance(source, str) and not (
            isinstance(source, list) and all(isinstance(s, str) for s in source)
        ):
            raise NotebookError(f"{shown}: cell {n} is damaged (its source is not text)")
        if "id" in cell and not (isinstance(cell["id"], str) and _ID.fullmatch(cell["id"])):
            raise NotebookError(f"{shown}: cell {n} has an invalid id {cell['id']!r}")
    ids = [c["id"] for c in cells if "id" in c]
    if len(ids) != len(set(ids)):
        raise NotebookError(f"{shown}: two cells share an id (the file is damaged)")
    return cells


def _spans(text: str) -> tuple[int, int, list[tuple[int, int]]] | None:
    """Where the top-level ``cells`` array opens and closes, and each cell's span."""
    depth = 0
    key: str | None = None
    opened = start = -1
    spans: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(text):
        token = m.group()
        if token[0] == '"':
            if depth == 1:
                rest = text[m.end() : m.end() + 64].lstrip()
                key = json.loads(token) if rest.startswith(":") else key
            continue
        if token in "[{":
            depth += 1
            if depth == 2 and opened < 0 and token == "[" and key == "cells":
                opened = m.start()
            elif depth == 3 and opened >= 0 and token == "{":
                start = m.start()
            if depth == 2:
                key = None
            continue
        if depth == 3 and opened >= 0 and start >= 0 and token == "}":
            spans.append((start, m.end()))
            start = -1
        elif depth == 2 and opened >= 0 and token == "]":
            return opened, m.start(), spans
        depth -= 1
    return None


@dataclass(kw_only=True)
class NotebookFile:
    """A parsed notebook file: ``data`` (the JSON), its ``cells`` and where
    each cell's text is (``None`` when it could not be located: ``render``
    then writes the whole file as Jupyter does)."""

    text: str
    data: dict[str, Any]
    shown: str
    _layout: tuple[int, int, list[tuple[int, int]]] | None = field(default=None, repr=False)

    @property
    def cells(self) -> list[dict[str, Any]]:
        return self.data["cells"]

    @property
    def has_ids(self) -> bool:
        return all(isinstance(c.get("id"), str) for c in self.cells) and (
            bool(self.cells) or self.data.get("nbformat_minor", 0) >= 5
        )

    @classmethod
    def parse(cls, raw: bytes, shown: str) -> NotebookFile:
        if len(raw) > MAX_NOTEBOOK_BYTES:
            raise NotebookError(
                f"{shown} is larger than {MAX_NOTEBOOK_BYTES // 1_000_000} MB ({len(raw):,} bytes)"
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotebookError(f"{shown} is not UTF-8 (byte {exc.start})") from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            where = getattr(exc, "lineno", None)
            at = f" at line {where}, column {getattr(exc, 'colno', '?')}" if where else ""
            raise NotebookError(
                f"{shown} is not valid JSON{at}: the file is truncated or damaged; "
                "open it in Jupyter or restore it before editing"
            ) from None
        except RecursionError:
            raise NotebookError(f"{shown} is nested too deeply to be a notebook") from None
        _check_cells(data, shown)
        layout = _spans(text)
        if layout is not None and len(layout[2]) != len(data["cells"]):
            layout = None
        return cls(text=text, data=data, shown=shown, _layout=layout)

    def with_ids(self, seed: str) -> list[dict[str, Any]]:
        """The cells, each with an id (ids made for those without, from ``seed``)."""
        taken = {c["id"] for c in self.cells if isinstance(c.get("id"), str)}
        out = []
        for n, cell in enumerate(self.cells):
            if not isinstance(cell.get("id"), str):
                cell = {**cell, "id": new_cell_id(taken, f"{seed}:{n}:{cell_source(cell)}")}
                taken.add(cell["id"])
            out.append(cell)
        return out

    def render(self, cells: Sequence[dict[str, Any]], changed: Iterable[int]) -> bytes:
        """The file with ``cells`` in place of its cells; ``changed`` are the
        positions in ``cells`` (of cells new or edited) that are written anew,
        every other entry must be one of the file's own cells, unchanged."""
        fresh = set(changed)
        layout = self._layout
        own = {id(c): n for n, c in enumerate(self.cells)}
        whole = layout is None or any(
            n not in fresh and id(c) not in own for n, c in enumerate(cells)
        )
        if whole or (not self.has_ids and any(isinstance(c.get("id"), str) for c in cells)):
            data = dict(self.data)
            data["cells"] = [disk_cell(c) if n in fresh else c for n, c in enumerate(cells)]
            if any(isinstance(c.get("id"), str) for c in cells):
                data["nbformat_minor"] = max(5, int(data.get("nbformat_minor") or 0))
            text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
            return text.encode("utf-8")
        assert layout is not None
        opened, closed, spans = layout
        text = self.text
        lead = text[opened + 1 : spans[0][0]] if spans else "\n  "
        sep = text[spans[0][1] : spans[1][0]] if len(spans) > 1 else "," + lead
        tail = text[spans[-1][1] : closed] if spans else "\n "
        base = lead.rpartition("\n")[2] if "\n" in lead else ""
        unit = self._indent_unit(base)
        as_lines = self._sources_as_lines()
        parts = []
        for n, cell in enumerate(cells):
            if n in fresh:
                body = json.dumps(
                    disk_cell(cell, as_lines=as_lines), indent=unit, ensure_ascii=False
                )
                parts.append(body.replace("\n", "\n" + base) if "\n" in lead else body)
            else:
                start, end = spans[own[id(cell)]]
                parts.append(text[start:end])
        inner = (lead + sep.join(parts) + tail) if parts else ""
        return (text[: opened + 1] + inner + text[closed:]).encode("utf-8")

    def _indent_unit(self, base: str) -> int | None:
        layout = self._layout
        if layout is None or not layout[2]:
            return 1
        start, end = layout[2][0]
        first = self.text[start:end].split("\n", 2)
        if len(first) < 2:
            return None  # the file is on one line: keep it so
        return max(1, len(first[1]) - len(first[1].lstrip(" ")) - len(base))

    def _sources_as_lines(self) -> bool:
        sample = next((c for c in self.cells if c.get("source")), None)
        return sample is None or isinstance(sample.get("source"), list)
