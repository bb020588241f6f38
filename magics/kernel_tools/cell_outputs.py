"""What code run by the agent (``run_python``, ``notebook_run``) outputs, as
a notebook cell would show it: ``stream`` text (stdout, stderr), ``display_data``
(``display(...)``, a figure), the ``execute_result`` of a last expression
and an ``error``, in the order they happened, as nbformat outputs.

While the code runs, ``capturing(shell, sink)`` points ``sys.stdout`` /
``sys.stderr`` and the shell's display publisher at the sink, so nothing it
shows lands in the agent cell's own output. Text is kept up to
``KEEP_CHARS`` per stream (the rest counted), a single rich output up to
``KEEP_BYTES`` (a larger one is replaced by a line saying so).
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from typing import Any

from IPython.core.displaypub import DisplayPublisher

__all__ = ["KEEP_BYTES", "KEEP_CHARS", "OutputSink", "capturing"]

KEEP_CHARS = 1_000_000
KEEP_BYTES = 20_000_000


class OutputSink:
    """The outputs of one run, in order (nbformat 4 dicts)."""

    def __init__(self) -> None:
        self.outputs: list[dict[str, Any]] = []
        self.kept: dict[str, int] = {}
        self.dropped = 0

    def stream(self, name: str, text: str) -> None:
        if not text:
            return
        room = KEEP_CHARS - self.kept.get(name, 0)
        if room <= 0:
            self.dropped += len(text)
            return
        if len(text) > room:
            self.dropped += len(text) - room
            text = text[:room]
        self.kept[name] = self.kept.get(name, 0) + len(text)
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last.get("output_type") == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})

    def rich(
        self, kind: str, data: dict[str, Any], metadata: dict[str, Any], count: int | None
    ) -> None:
        size = sum(len(v) if isinstance(v, str) else len(str(v)) for v in data.values())
        if size > KEEP_BYTES:
            plain = f"[{', '.join(sorted(data))} output of {size:,} bytes: too large to keep]"
            data, metadata = {"text/plain": plain}, {}
        output: dict[str, Any] = {
            "output_type": kind,
            "data": dict(data),
            "metadata": dict(metadata),
        }
        if kind == "execute_result":
            output["execution_count"] = count
        self.outputs.append(output)

    def error(self, ename: str, evalue: str, traceback: list[str]) -> None:
        self.outputs.append(
            {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": traceback}
        )

    def clear(self) -> None:
        self.outputs.clear()
        self.kept.clear()

    def text(self) -> str:
        """Stream text and each rich output's ``text/plain``, in order."""
        parts = []
        for output in self.outputs:
            if output["output_type"] == "stream":
                parts.append(output["text"])
            elif output["output_type"] == "display_data":
                plain = output["data"].get("text/plain")
                if isinstance(plain, str) and not set(output["data"]) & {"image/png", "image/jpeg"}:
                    parts.append(plain + "\n")
        return "".join(parts)


class _Writer(io.TextIOBase):
    def __init__(self, sink: OutputSink, name: str) -> None:
        self.sink = sink
        self.name = name

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.sink.stream(self.name, str(s))
        return len(s)


class _Publisher(DisplayPublisher):
    """The shell's display publisher while the code runs: into the sink."""

    def __init__(self, sink: OutputSink) -> None:
        super().__init__()
        self.sink = sink

    def publish(self, data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        if isinstance(data, dict):
            self.sink.rich("display_data", data, metadata or {}, None)

    def clear_output(self, wait: bool = False) -> None:
        self.sink.clear()


@contextlib.contextmanager
def capturing(shell: Any, sink: OutputSink) -> Iterator[None]:
    """Everything the code prints or displays goes to ``sink`` inside."""
    saved = getattr(shell, "display_pub", None)
    with (
        contextlib.redirect_stdout(_Writer(sink, "stdout")),
        contextlib.redirect_stderr(_Writer(sink, "stderr")),
    ):
        if saved is not None:
            shell.display_pub = _Publisher(sink)
        try:
            yield
        finally:
            if saved is not None:
                shell.display_pub = saved
            sys.stdout.flush()
