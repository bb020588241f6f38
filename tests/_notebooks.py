"""Notebook files for the notebook-tool tests: cells with fixed ids, a PNG
made with the standard library, and reading what the model was sent."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

from mewcode_kernel.testing.wire import ReceivedRequest


def png(width: int, height: int, rgb: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A solid ``width``×``height`` PNG, written with zlib only."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    row = b"\0" + bytes(rgb) * width
    raw = zlib.compress(row * height)
    head = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def png_b64(width: int = 4, height: int = 3) -> str:
    return base64.b64encode(png(width, height)).decode()


def code(cid: str, source: str, outputs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "cell_type": "code", "execution_count": None, "id": cid, "metadata": {},
        "outputs": outputs or [], "source": source.splitlines(keepends=True),
    }  # fmt: skip


def markdown(cid: str, source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cid, "metadata": {}, "source": source}


def notebook(cells: list[dict[str, Any]]) -> str:
    data = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def image_output(b64: str) -> dict[str, Any]:
    return {
        "output_type": "display_data", "metadata": {},
        "data": {"image/png": b64, "text/plain": ["<Figure size 4x3>"]},
    }  # fmt: skip


def cells_of(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["cells"]


def source(cell: dict[str, Any]) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def last_result(request: ReceivedRequest) -> dict[str, Any]:
    content = request.body["messages"][-1]["content"]
    return next(c for c in content if c.get("type") == "tool_result")


def result_text(request: ReceivedRequest) -> str:
    content = last_result(request)["content"]
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content if c.get("type") == "text")


def result_images(request: ReceivedRequest) -> list[dict[str, Any]]:
    content = last_result(request)["content"]
    return [c for c in content if isinstance(c, dict) and c.get("type") == "image"]
