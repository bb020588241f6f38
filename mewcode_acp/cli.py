"""``python -m mewcode_kernel acp`` and ``mewcode-acp``: MewCode as an Agent
Client Protocol agent on stdio, for chat panels (Zed, JupyterLab through
Jupyter AI, marimo) that start it as a subprocess.

The protocol runs on private copies of stdin and stdout (``framing``);
logs and anything else printed go to stderr. The server stops when the
client closes its end (or on SIGTERM / SIGINT): running turns are
cancelled, their conversations closed, and every session ended, so each
session log stays valid.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from typing import Any

__all__ = ["ACP_REQUIREMENT", "USAGE", "main", "serve"]

ACP_REQUIREMENT = "agent-client-protocol>=0.11,<0.13"

USAGE = """usage: python -m mewcode_kernel acp   (or: mewcode-acp)

MewCode as an Agent Client Protocol (ACP) agent over stdio: a chat panel
that speaks ACP starts this command and talks to it on stdin/stdout. The
project is the session's cwd; its sessions live in .mewcode/sessions/, the
same store the notebook's %%agent cells use (session/load and
%%agent --resume ID both continue one). Logs go to stderr.

Settings come from the environment as for the kernel: the provider's key
(ANTHROPIC_API_KEY, OPENAI_API_KEY) or .mewcode.yaml, MEWCODE_TRUST_PROJECT,
MEWCODE_HEADLESS_APPROVAL (what holds when the client cannot answer a
permission request), MEWCODE_ROOT.
"""


def _missing_library() -> str | None:
    try:
        import acp  # noqa: F401
    except ImportError:
        return (
            "MewCode's ACP server needs the Agent Client Protocol library, which is not "
            f"installed: pip install '{ACP_REQUIREMENT}'"
        )
    return None


async def serve(read_fd: int, write_fd: int) -> None:
    """Serve one client on the two descriptors until it goes away."""
    from acp.core import AgentSideConnection

    from .framing import ProtocolPipes, open_streams
    from .server import MewcodeAgent

    reader, writer, guard = await open_streams(ProtocolPipes(read_fd, write_fd))
    agents: list[MewcodeAgent] = []

    def make_agent(client: Any) -> MewcodeAgent:
        agent = MewcodeAgent(client)
        agents.append(agent)
        return agent

    connection = AgentSideConnection(make_agent, writer, reader, listening=False)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    guarding = asyncio.ensure_future(guard.run())
    listening = asyncio.ensure_future(connection.listen())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({listening, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for agent in agents:
            await agent.aclose()
        for task in (listening, stopping, guarding):
            task.cancel()
        await asyncio.wait({listening, stopping, guarding})
        with contextlib.suppress(Exception):
            await connection.close()
        with contextlib.suppress(Exception):
            writer.close()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in {"-h", "--help", "help"}:
        print(USAGE, end="")
        return 0
    if argv:
        print(f"mewcode-acp: unexpected arguments {argv!r}\n\n{USAGE}", end="", file=sys.stderr)
        return 2
    missing = _missing_library()
    if missing is not None:
        print(missing, file=sys.stderr)
        return 1
    from .framing import take_stdio

    pipes = take_stdio()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="mewcode-acp: %(message)s")
    try:
        asyncio.run(serve(pipes.read_fd, pipes.write_fd))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
