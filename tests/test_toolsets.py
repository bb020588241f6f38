"""A toolset from outside the core, as an MCP server or a front end would add
one: it opens and closes with the session, streams progress while a tool
runs, returns an image, and gains and loses tools between turns. Driven
through the real Anthropic and OpenAI SDKs against a local server speaking
their wire formats; the progress is drawn by the live widget renderer."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field

from magics.render_widgets import WidgetRenderer
from mewcode_kernel.core import open_session
from mewcode_kernel.core.events import AgentEvent, ToolFinished, ToolProgress
from mewcode_kernel.core.messages import ImageBlock, ImageSource, TextBlock
from mewcode_kernel.core.session import load_session
from mewcode_kernel.core.tools import RunContext, Tool, ToolOutput, tool
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._frontend import FakeCell

# the tests' projects are the user's own: their provider on a local server applies

pytestmark = pytest.mark.usefixtures("comm_log", "trusted_projects")

# A 1x1 transparent PNG.
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000105fe02fe0000000049454e44ae426082"
    )
).decode()


@tool(read_only=True, kind="read", display_key="title", background_ok=True)
async def snapshot(
    ctx: RunContext, title: Annotated[str, Field(description="What to draw.")]
) -> ToolOutput:
    """Draw a chart and return it as an image."""
    ctx.progress(status="rendering 1 of 2")
    await asyncio.sleep(0)
    ctx.progress(output="axis ready\n", status="rendering 2 of 2")
    return ToolOutput(
        content=[
            TextBlock(text=f"Chart {title!r} drawn."),
            ImageBlock(source=ImageSource(media_type="image/png", data=PIXEL), note="chart"),
        ]
    )


@tool(read_only=True, kind="read")
async def zeta(ctx: RunContext) -> str:
    """A tool that joins later."""
    return "zeta"


class ChartToolset:
    """Tools that come and go; records its lifecycle."""

    name = "charts"

    def __init__(self) -> None:
        self.version = 0
        self.opened = 0
        self.closed = 0
        self._tools: list[Tool] = [snapshot]

    def tools(self) -> Sequence[Tool]:
        return list(self._tools)

    def add(self, t: Tool) -> None:
        self._tools.append(t)
        self.version += 1

    async def __aenter__(self) -> ChartToolset:
        self.opened += 1
        return self

    async def __aexit__(self, *_: object) -> None:
        self.closed += 1


def _config(root: Path, server: ScriptedServer, protocol: str) -> None:
    base_url = server.base_url if protocol == "anthropic" else server.openai_base_url
    (root / ".mewcode.yaml").write_text(
        f"default_provider: local\nproviders:\n  local:\n    protocol: {protocol}\n"
        f"    model: test-model\n    base_url: {base_url}\n    api_key: sk-test\n"
    )


def _tool_names(body: dict[str, Any], protocol: str) -> list[str]:
    if protocol == "anthropic":
        return [t["name"] for t in body["tools"]]
    return [t["function"]["name"] for t in body["tools"]]


async def test_a_toolset_streams_progress_returns_an_image_and_changes_between_turns(
    tmp_path: Path,
) -> None:
    charts = ChartToolset()
    script = [
        reply(tool_calls=[("snapshot", {"title": "sales"})]),
        reply(text="Here is the chart."),
        reply(text="Second turn."),
        reply(text="Third turn."),
    ]
    with ScriptedServer(script) as server:
        _config(tmp_path, server, "anthropic")
        cell = FakeCell()
        async with open_session(tmp_path, home=tmp_path / "home") as session:
            await session.tools.add_toolset(charts)
            assert charts.opened == 1  # entered with the session
            renderer = WidgetRenderer(surface=cell)
            renderer.start(
                prompt="chart", provider_label="test", session_id=None, tools=session.tools.get
            )
            events: list[AgentEvent] = []
            seen_while_running: list[str] = []
            async for event in session.run("Draw the sales chart."):
                renderer.on_event(event)
                events.append(event)
                if isinstance(event, ToolProgress):
                    renderer.painter.flush()  # what the cell shows now
                    seen_while_running += [o.plain for o in cell.outputs]
            renderer.finish(None)
            session_id = session.session_id
            await collect(session.run("Again."))
            charts.add(zeta)  # between turns: joins at the next turn, at the end
            await collect(session.run("And again."))
            await session.tools.remove_toolset(charts)
            assert charts.closed == 1
        server.assert_all_used()
        bodies = server.requests

    # progress reached the stream while the tool ran, before its result
    kinds = [type(e).__name__ for e in events]
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert [p.status for p in progress] == ["rendering 1 of 2", "rendering 2 of 2"]
    assert kinds.index("ToolProgress") < kinds.index("ToolFinished")
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.result.images and finished.result.images[0].source.data == PIXEL

    # the provider received the image as an Anthropic image block in the tool result
    result = bodies[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert result["content"][0] == {"type": "text", "text": "Chart 'sales' drawn."}
    image = result["content"][1]
    assert image["type"] == "image" and image["source"]["data"] == PIXEL
    assert image["source"]["media_type"] == "image/png"

    # the session log keeps the image, and a resume reads it back
    stored = load_session(tmp_path, session_id)  # type: ignore[arg-type]
    [image_result] = [r for m in stored.messages for r in m.tool_results if r.images]
    assert image_result.images[0].source.data == PIXEL and image_result.images[0].note == "chart"

    # tool order is deterministic; the cached prefix (system + tools) is byte-stable
    # until the toolset changes, and a new tool joins at the end
    first = _tool_names(bodies[0], "anthropic")
    assert first[-1] == "snapshot" and first[:6] == [
        "read_file", "write_file", "edit_file", "glob", "grep", "bash",
    ]  # fmt: skip
    prefix = [json.dumps([b["system"], b["tools"]], sort_keys=True) for b in bodies]
    assert prefix[0] == prefix[1] == prefix[2]
    assert _tool_names(bodies[3], "anthropic") == [*first, "zeta"]

    # the live row showed the progress while the tool ran, then the result
    live = [o for o in seen_while_running if o.startswith("◐ snapshot sales · running · ")]
    assert [line.rpartition(" · ")[2] for line in live] == ["rendering 1 of 2", "rendering 2 of 2"]
    row = next(o for o in cell.outputs if o.plain.startswith("✓ snapshot"))
    assert row.plain.startswith("✓ snapshot sales · done")


async def test_an_image_reaches_openai_as_an_image_part(tmp_path: Path) -> None:
    """Chat Completions takes no image in a tool message: the tool message names
    it and a user message right after the tool messages carries it as a data URL."""
    charts = ChartToolset()
    script = [reply(tool_calls=[("snapshot", {"title": "q3"})]), reply(text="Done.")]
    with ScriptedServer(script) as server:
        _config(tmp_path, server, "openai")
        async with open_session(tmp_path, home=tmp_path / "home") as session:
            await session.tools.add_toolset(charts)
            await collect(session.run("Draw q3."))
        server.assert_all_used()
        body = server.requests[1]
    at = next(i for i, m in enumerate(body["messages"]) if m["role"] == "tool")
    tool_message, images = body["messages"][at], body["messages"][at + 1]
    assert "Chart 'q3' drawn." in tool_message["content"]
    assert "[image: image/png" in tool_message["content"]
    assert "attached in the next message" in tool_message["content"]
    assert PIXEL not in tool_message["content"]
    assert images["role"] == "user"
    urls = [p["image_url"]["url"] for p in images["content"] if p["type"] == "image_url"]
    assert urls == [f"data:image/png;base64,{PIXEL}"]


async def test_a_front_end_passes_its_toolsets_when_it_opens_the_session(tmp_path: Path) -> None:
    """``open_session(toolsets=...)``: the notebook's kernel tools join this way,
    entered and closed with the session, offered from the first turn."""
    charts = ChartToolset()
    with ScriptedServer([reply(text="Seen.")]) as server:
        _config(tmp_path, server, "anthropic")
        session = open_session(tmp_path, home=tmp_path / "home", toolsets=[charts])
        assert "snapshot" in session.tools.names  # before the first turn: /tools lists it
        async with session:
            assert charts.opened == 1
            await collect(session.run("What can you draw?"))
        assert charts.closed == 1
        server.assert_all_used()
        names = _tool_names(server.requests[0], "anthropic")
    assert "snapshot" in names and names.index("snapshot") > names.index("bash")
