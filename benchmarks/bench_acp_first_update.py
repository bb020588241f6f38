"""A chat panel's first answer beside a notebook's: ``python -m mewcode_kernel acp``
against the ``%%agent`` cell of a fresh ``mewcode`` kernel, one one-line
prompt each, the model a local scripted Anthropic-protocol server.

The ACP side is driven by the ACP library's client, as Jupyter AI or Zed
drive it: start the process, ``initialize``, ``session/new``, then the
prompt at once. The notebook side starts a kernel and runs ``%%agent`` as
JupyterLab does (``allow_stdin``: the live widget renderer) as soon as the
kernel is ready. Both clocks start when the process is started, so a user
who opens a chat and one who opens a notebook are compared; the
``turn`` columns start at the prompt (``session/prompt`` sent, the cell
executed), the latency of a turn once the agent is up. Runs alternate
between the two; medians are printed.

    python benchmarks/bench_acp_first_update.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _project import bench_env, scripted_project
from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.connection import StreamDirection, StreamEvent
from acp.helpers import text_block
from acp.schema import DeniedOutcome, RequestPermissionResponse
from jupyter_client.manager import KernelManager

from mewcode_kernel.testing import install_kernelspec
from mewcode_kernel.testing.wire import ScriptedServer, reply

ANSWER = "Hello from the scripted model."
PROMPT = "Say hello."
TIMEOUT = 60.0
# updates about the session, not the turn: the first of a prompt's is something else
SESSION_UPDATES = frozenset(
    {"available_commands_update", "current_mode_update", "session_info_update"}
)


@dataclass
class AcpClock:
    """The ACP client: timestamps what the agent sends the moment it is read."""

    start: float
    prompted: float | None = None
    first_update: float | None = None  # of the turn, after the prompt was sent
    first_any_update: float | None = None  # of any kind (the session's commands)
    answer: float | None = None
    seen: list[str] = field(default_factory=list)

    def observe(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction != StreamDirection.INCOMING or message.get("method") != "session/update":
            return
        now = time.monotonic()
        update = message["params"]["update"]
        kind = update.get("sessionUpdate", "")
        self.seen.append(kind)
        if self.first_any_update is None:
            self.first_any_update = now
        if self.prompted is not None and kind not in SESSION_UPDATES:
            if self.first_update is None:
                self.first_update = now
            text = update.get("content", {}).get("text", "") if isinstance(update, dict) else ""
            if self.answer is None and kind == "agent_message_chunk" and text:
                self.answer = now

    async def request_permission(self, **_: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def session_update(self, **_: Any) -> None:
        return None  # timed by ``observe``, when the line is read


async def acp_run(root: Path, env: dict[str, str], server: ScriptedServer) -> dict[str, float]:
    server.add(reply(text=ANSWER))
    clock = AcpClock(start=time.monotonic())
    command = (sys.executable, "-m", "mewcode_kernel", "acp")
    async with spawn_agent_process(
        clock, *command, env=env, cwd=root, observers=[clock.observe]
    ) as (conn, process):
        async with asyncio.timeout(TIMEOUT):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            ready = time.monotonic()
            session_id = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            opened = clock.prompted = time.monotonic()
            result = await conn.prompt(session_id=session_id, prompt=[text_block(PROMPT)])
            done = time.monotonic()
        assert result.stop_reason == "end_turn", result
        assert clock.first_update is not None and clock.answer is not None, clock.seen
        if process.stdin is not None:
            process.stdin.close()  # the client goes away: the server stops by itself
        async with asyncio.timeout(TIMEOUT):
            await process.wait()
    start = clock.start
    return {
        "ready": ready - start,
        "session open": opened - start,
        "first update": clock.first_update - start,
        "answer text": clock.answer - start,
        "done": done - start,
        "turn: first update": clock.first_update - opened,
        "turn: answer text": clock.answer - opened,
    }


def kernel_run(root: Path, env: dict[str, str], server: ScriptedServer) -> dict[str, float]:
    server.add(reply(text=ANSWER))
    start = time.monotonic()
    km = KernelManager(kernel_name="mewcode")
    km.start_kernel(cwd=str(root), env=env)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=TIMEOUT)
        ready = executed = time.monotonic()
        msg_id = kc.execute(f"%%agent\n{PROMPT}", allow_stdin=True)
        first = text = None
        while True:
            msg = kc.get_iopub_msg(timeout=TIMEOUT)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            now = time.monotonic()
            kind = msg["msg_type"]
            if kind in ("display_data", "stream", "error") and first is None:
                first = now
            data = msg["content"].get("data", {})
            if text is None and ANSWER in str(data.get("text/markdown", "")):
                text = now
            if kind == "status" and msg["content"]["execution_state"] == "idle":
                done = now
                break
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert first is not None and text is not None, "the cell showed no answer"
    return {
        "ready": ready - start,
        "first update": first - start,
        "answer text": text - start,
        "done": done - start,
        "turn: first update": first - executed,
        "turn: answer text": text - executed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {"ACP (chat panel)": [], "%%agent (kernel)": []}
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server:
        tmp_path = Path(tmp)
        os.environ["JUPYTER_PATH"] = str(install_kernelspec(tmp_path / "prefix"))
        root = scripted_project(tmp_path, server.base_url)
        # the project is the user's own: its scripted provider needs no trust card
        env = {**bench_env(tmp_path), "MEWCODE_TRUST_PROJECT": "1"}
        asyncio.run(acp_run(root, env, server))  # warm the disk cache
        kernel_run(root, env, server)
        for _ in range(args.runs):
            results["ACP (chat panel)"].append(asyncio.run(acp_run(root, env, server)))
            results["%%agent (kernel)"].append(kernel_run(root, env, server))
        assert not server.errors, server.errors
    print(
        f"a one-line prompt to a freshly started agent, scripted model ({args.runs} runs, medians)"
    )
    print("  from the start of the process:")
    columns = ("ready", "session open", "first update", "answer text", "done")
    _table(results, columns)
    print("  from the prompt (session/prompt sent, the cell executed):")
    _table(results, ("turn: first update", "turn: answer text"))
    print("  first update: ACP's first session/update of the turn; the cell's first visible output")
    return 0


def _table(results: dict[str, list[dict[str, float]]], columns: tuple[str, ...]) -> None:
    for name, runs in results.items():
        cells = []
        for column in columns:
            values = [run[column] for run in runs if column in run]
            shown = f"{statistics.median(values):.3f} s" if values else "-"
            cells.append(f"{column.removeprefix('turn: ')} {shown}")
        print(f"    {name:17} " + "   ".join(cells))


if __name__ == "__main__":
    sys.exit(main())
