"""An interrupted turn still counts what it spent: the real SDKs over a local
server whose stream pauses mid-response, then the turn is cancelled."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mewcode_kernel.core import open_session
from mewcode_kernel.core.events import TextDelta
from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing.wire import ScriptedServer, reply, stall_after, status

ENV = {"LOCAL_KEY": "sk-x"}
# the project is the user's own: its provider on a local test server applies
pytestmark = pytest.mark.usefixtures("trusted_projects")
BIG_PROMPT = Usage(input_tokens=3700, output_tokens=900, cache_read_tokens=1200)


def config(protocol: str, server: ScriptedServer) -> str:
    base_url = server.base_url if protocol == "anthropic" else server.openai_base_url
    return (
        "default_provider: local\nproviders:\n  local:\n"
        f"    protocol: {protocol}\n    model: test-model\n"
        f"    base_url: {base_url}\n    api_key: ${{LOCAL_KEY}}\n"
    )


async def run_until_stalled(tmp_path: Path, protocol: str, *steps):  # type: ignore[no-untyped-def]
    """Start a turn, wait until the server pauses mid-stream, cancel it; the session."""
    answer, stall = stall_after(6, reply(text="A long answer " * 40, usage=BIG_PROMPT))
    with ScriptedServer([*steps, answer]) as server:
        (tmp_path / ".mewcode.yaml").write_text(config(protocol, server))
        session = open_session(tmp_path, home=tmp_path / "home", env=ENV)
        streaming = asyncio.Event()

        async def consume() -> None:
            async for event in session.run("Explain the whole code base."):
                if isinstance(event, TextDelta):
                    streaming.set()

        task = asyncio.ensure_future(consume())
        try:
            await asyncio.to_thread(stall.reached.wait, 30)
            assert stall.reached.is_set(), "the stream never reached its pause"
            await asyncio.wait_for(streaming.wait(), 30)  # the frames before it arrived
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            stall.release()
        await session.aclose()
    return session


async def test_anthropic_counts_the_input_reported_before_the_cut(tmp_path: Path) -> None:
    session = await run_until_stalled(tmp_path, "anthropic")
    turn = session.state.cancelled_turn
    assert turn is not None and turn.reason == "cancelled"
    # message_start carried the real input counts; output is at least what streamed
    assert turn.usage.input_tokens == 3700
    assert turn.usage.cache_read_tokens == 1200
    assert 1 <= turn.usage.output_tokens < 900
    assert session.state.usage == turn.usage == turn.session_usage


async def test_openai_estimates_an_interrupted_response(tmp_path: Path) -> None:
    # Chat Completions only reports usage in its last chunk: estimated instead
    session = await run_until_stalled(tmp_path, "openai")
    turn = session.state.cancelled_turn
    assert turn is not None
    assert turn.usage.input_tokens > 100  # the system prompt and tool schemas alone
    assert turn.usage.output_tokens >= 1
    assert session.state.usage == turn.usage


async def test_a_failed_attempt_before_the_retry_is_counted(tmp_path: Path) -> None:
    session = await run_until_stalled(tmp_path, "anthropic", status(529, retry_after=0))
    turn = session.state.cancelled_turn
    assert turn is not None and turn.usage.input_tokens == 3700  # the 529 billed nothing


async def test_the_next_turn_starts_clean_and_adds_to_the_session(tmp_path: Path) -> None:
    session = await run_until_stalled(tmp_path, "anthropic")
    spent = session.state.usage
    with ScriptedServer([reply(text="Short.", usage=Usage(input_tokens=50, output_tokens=2))]) as s:
        (tmp_path / ".mewcode.yaml").write_text(config("anthropic", s))
        again = open_session(tmp_path, home=tmp_path / "home", env=ENV)
        again.state.usage = spent
        events = [e async for e in again.run("And briefly?")]
        await again.aclose()
    assert again.state.cancelled_turn is None
    assert events[-1].usage == Usage(input_tokens=50, output_tokens=2)
    assert again.state.usage == spent + Usage(input_tokens=50, output_tokens=2)
