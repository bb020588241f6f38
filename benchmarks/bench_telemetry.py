"""The harness's cost per model turn with telemetry off and on (by hand).

A session (its log on tmpfs, its hooks, its gate) runs a 30-round user turn
against a zero-latency scripted model, each round one cheap read-only tool
call. Off: the default. On: every signal exported over OTLP/HTTP through
the batch processors to a local receiver (a thread of this process: the
export's work is counted), no console exporter. Sessions alternate off and
on; the medians are printed, and the overhead against the 5% target.

    PYTHONPATH=. python benchmarks/bench_telemetry.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.events import ToolFinished
from mewcode_kernel.core.telemetry import flush
from mewcode_kernel.core.telemetry.pipeline import shutdown_all
from mewcode_kernel.testing import ScriptedModel, reply, tool_call

ROUNDS = 30
RUNS = 12
TARGET = 0.05


class _Collector(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return None


async def one_turn(root: Path, home: Path) -> float:
    """Seconds per model turn of one user turn, tool time excluded."""
    script = [
        reply(f"step {i}", tool_call("read_file", {"path": "notes.txt"})) for i in range(ROUNDS - 1)
    ]
    script.append(reply("finished"))
    config = load_config(root, home=home, env={})
    session = AgentSession(
        root, config=config, provider=ScriptedModel(script), home=home, max_turns=ROUNDS
    )
    tools = 0.0
    async with session:
        start = time.perf_counter()
        async for event in session.run("go"):
            if isinstance(event, ToolFinished):
                tools += event.duration
        total = time.perf_counter() - start
    return (total - tools) / ROUNDS


async def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    on = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_LOGS_EXPORTER": "otlp",
    }
    os.environ.update(on)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        root, home = Path(tmp) / "project", Path(tmp) / "home"
        root.mkdir()
        home.mkdir()
        (root / "notes.txt").write_text("notes\n")
        timings: dict[str, list[float]] = {"off": [], "on": []}
        for n in range(RUNS + 1):
            # alternate which goes first: what the disk does meanwhile falls on both
            for mode in ("off", "on") if n % 2 else ("on", "off"):
                os.environ["MEWCODE_ENABLE_TELEMETRY"] = "1" if mode == "on" else "0"
                per_turn = await one_turn(root, home)
                if n:  # the first of each is a warm-up
                    timings[mode].append(per_turn)
        flush()
    shutdown_all()  # the last export while the receiver still listens
    server.shutdown()
    off, on_ = (statistics.median(timings[m]) * 1000 for m in ("off", "on"))
    overhead = on_ / off - 1
    print(f"per model turn, median of {RUNS} user turns of {ROUNDS} rounds:")
    print(f"  telemetry off (before): {off:.3f} ms")
    print(f"  telemetry on  (after):  {on_:.3f} ms (OTLP/HTTP, batch processors)")
    print(f"  overhead: {overhead:+.1%} (target: within {TARGET:.0%})")


if __name__ == "__main__":
    asyncio.run(main())
