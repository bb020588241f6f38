"""What the side-by-side benchmark runs: one scripted task for MewCode and for
Claude Code, against the same local model server, timed from that server.

The task: the model reads a small file ``TURNS`` times (one call a reply, a
tool that costs nothing) and then answers. Each side is offered the same six
tools (Claude Code through ``--tools``; MewCode's defaults in a project with no
skills, tasks or custom subagents). The server notes when each request
arrives and when each streamed reply has been sent in full, so:

* start-up: process start -> first request arrives;
* per-turn gap: a reply's last byte sent -> the next request arrives;
* request size: the bytes of the first request's body.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _project import bench_env, cell_messages, scripted_project, started_kernel

from mewcode_kernel.testing.wire import ScriptedServer, WireReply, reply

__all__ = [
    "CLAUDE_TOOLS",
    "TURNS",
    "Run",
    "TimedServer",
    "claude_binary",
    "kernel_first_request",
    "run_claude",
    "run_mewcode",
    "task_project",
]

TURNS = 5
PROMPT = "Read notes.txt a few times, then say done."
CLAUDE_TOOLS = "Bash,Edit,Glob,Grep,Read,Write"

MEWCODE_CHILD = """
import asyncio, sys
from mewcode_kernel.core import open_session

async def main():
    session = open_session(sys.argv[1])
    async for event in session.run(sys.argv[2]):
        if event.kind == "turn_done":
            print("DONE", flush=True)

asyncio.run(main())
"""


@dataclass(frozen=True, slots=True)
class Run:
    """One run's figures (seconds, bytes)."""

    start_to_first_request: float
    gaps: tuple[float, ...]
    first_request_bytes: int

    @property
    def gap(self) -> float:
        ordered = sorted(self.gaps)
        return ordered[len(ordered) // 2]


class TimedServer(ScriptedServer):
    """Keeps each request's arrival time and size, and when each reply ended."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []
        self.sizes: list[int] = []
        self.reply_ends: list[float] = []
        self._times = threading.Lock()

    def _handle(self, h):  # type: ignore[no-untyped-def]
        # without it, Nagle holds a reply's last small frames until the client
        # acknowledges (delayed ACK: up to 40 ms), which would be timed as the client's
        h.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super()._handle(h)

    def _receive(self, request, scripted):  # type: ignore[no-untyped-def]
        with self._times:
            self.arrivals.append(time.monotonic())
            self.sizes.append(int(request.headers.get("Content-Length") or 0))
        return super()._receive(request, scripted)

    def _send_stream(self, h, step, protocol, body, n):  # type: ignore[no-untyped-def]
        super()._send_stream(h, step, protocol, body, n)
        h.wfile.flush()
        with self._times:
            self.reply_ends.append(time.monotonic())

    def mark(self) -> int:
        with self._times:
            return len(self.arrivals)

    def figures(self, first: int, start: float) -> Run:
        """The run whose first request was number ``first``."""
        with self._times:
            arrivals = self.arrivals[first:]
            ends = self.reply_ends[first:]
            size = self.sizes[first]
        gaps = tuple(nxt - end for end, nxt in zip(ends, arrivals[1:], strict=False))
        return Run(arrivals[0] - start, gaps, size)


def _read_step(path: Path) -> Any:
    """A reply that reads ``path`` with whichever read tool the request offers."""

    def step(body: dict[str, Any]) -> WireReply:
        names = {t.get("name") for t in body.get("tools") or ()}
        if "Read" in names:
            return reply(tool_calls=[("Read", {"file_path": str(path)})])
        return reply(tool_calls=[("read_file", {"path": path.name})])

    return step


def task_project(tmp: Path, server: TimedServer) -> Path:
    """The project both sides work in: MewCode's provider is ``server``."""
    root = scripted_project(tmp, server.base_url)
    (root / "notes.txt").write_text("one line of notes\n")
    return root


def _script(server: TimedServer, root: Path) -> None:
    for _ in range(TURNS):
        server.add(_read_step(root / "notes.txt"))
    server.add(reply(text="Done."))


def _finish(server: TimedServer, proc: subprocess.Popen[str], first: int, start: float) -> Run:
    out, err = proc.communicate(timeout=300)
    got = server.mark() - first
    if proc.returncode != 0 or got != TURNS + 1:
        raise RuntimeError(
            f"run failed (exit {proc.returncode}, {got} requests):\n{out[-2000:]}\n{err[-2000:]}"
        )
    return server.figures(first, start)


def run_mewcode(server: TimedServer, root: Path, env: dict[str, str]) -> Run:
    """``open_session(root).run(prompt)`` in a new process."""
    _script(server, root)
    first = server.mark()
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", MEWCODE_CHILD, str(root), PROMPT],
        env=env,
        cwd=root,  # not a checkout: "-c" puts the working directory first on sys.path
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return _finish(server, proc, first, start)


def claude_binary(given: str | None) -> str | None:
    """The ``claude`` to compare with: ``given``, ``$CLAUDE_BIN`` or on ``PATH``."""
    for candidate in (given, os.environ.get("CLAUDE_BIN"), shutil.which("claude")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def claude_env(tmp: Path, server: TimedServer) -> dict[str, str]:
    """Claude Code on the scripted server: an API key, no traffic of its own."""
    home = tmp / "claude-home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def run_claude(server: TimedServer, root: Path, claude: str, env: dict[str, str]) -> Run:
    """``claude -p`` with the same six tools, reading allowed."""
    _script(server, root)
    first = server.mark()
    start = time.monotonic()
    proc = subprocess.Popen(
        [claude, "-p", PROMPT, "--tools", CLAUDE_TOOLS, "--allowedTools", "Read",
         "--model", "claude-sonnet-4-5"],
        env=env, cwd=root, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    return _finish(server, proc, first, start)


def kernel_first_request(
    server: TimedServer, root: Path, env: dict[str, str], idle: float = 0.0
) -> Run:
    """The first ``%%agent`` cell of a fresh kernel: from execute to the first
    request, the cell run ``idle`` seconds after the kernel is ready (0: at
    once, as "Run all" does; a person takes a few seconds to type a prompt)."""
    _script(server, root)
    with started_kernel(root, env) as kc:
        if idle:
            time.sleep(idle)  # the person typing: what the benchmark measures, not a wait
        first = server.mark()
        start = time.monotonic()
        msg_id = kc.execute(f"%%agent\n{PROMPT}", allow_stdin=True)
        for _ in cell_messages(kc, msg_id, timeout=120):
            pass
        got = server.mark() - first
        if got != TURNS + 1:
            raise RuntimeError(f"kernel run made {got} requests, not {TURNS + 1}")
        return server.figures(first, start)


def mewcode_env(tmp: Path, pythonpath: str | None) -> dict[str, str]:
    """MewCode's environment: scrubbed, its own home, the project trusted."""
    return bench_env(tmp, pythonpath)
