"""MCP elicitation against real servers over stdio (the offerings fixture
server and the reference ``everything`` server): a request for input goes to
whoever answers the cell (here a handler standing for the notebook's form
card), is declined when nobody can answer (headless), and is refused with a
clear message when its schema is not one a form can show. What the person
answers is checked against the form before it is sent: a front end cannot
send what the form does not allow. The schema reader is attacked directly
with the shapes the protocol forbids."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core import AgentSession, open_session
from mewcode_kernel.core.events import Notice, ToolFinished, TurnDone
from mewcode_kernel.core.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    InvalidSchema,
    check_answer,
    parse_schema,
)
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._mcp import TESTS, node_server, provider_yaml, servers_yaml

pytestmark = pytest.mark.usefixtures("trusted_projects")

OFFERINGS = {"command": sys.executable, "args": [str(TESTS / "mcp_offerings_server.py")]}


def project(root: Path, model: str, **servers: dict[str, Any]) -> None:
    (root / ".mewcode.yaml").write_text(
        provider_yaml(model) + servers_yaml(servers or {"notes": OFFERINGS}, allow=["mcp__*"])
    )


def session(root: Path) -> AgentSession:
    return open_session(root, home=root / "home", project_trusted=lambda: True)


async def run_tool(
    root: Path, tool: str, handler: Any = None, **servers: dict[str, Any]
) -> tuple[str, list[Any], list[ElicitationRequest]]:
    """One turn calling ``tool`` with ``handler`` answering (``None``: headless),
    and one more (the session goes on); the tool's result, both turns' events
    and what the handler was asked."""
    asked: list[ElicitationRequest] = []

    async def answer(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return await handler(request)

    script = [reply(tool_calls=[(tool, {}, "c1")]), reply(text="ok"), reply(text="again")]
    with ScriptedServer(script) as model:
        project(root, model.base_url, **servers)
        async with session(root) as s:
            assert s.mcp is not None  # (the everything server adds its tool once connected)
            await asyncio.wait_for(
                s.mcp.wait_until(lambda m: any(t.name == tool for t in m.tools())), 30
            )
            overrides = {"elicitation_handler": answer if handler is not None else None}
            async with s.for_cell(**overrides):
                events = await collect(s.run("Go."))
            later = await collect(s.run("Again."))
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert isinstance(later[-1], TurnDone) and later[-1].reason == "end_turn"
    return str(finished.result.content), [*events, *later], asked


async def test_the_person_fills_in_the_form(tmp_path: Path) -> None:
    async def fill(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer(action="accept", content={"name": "Ada", "age": "36"})

    result, _, [asked] = await run_tool(tmp_path, "mcp__notes__ask_person", fill)
    assert asked.server == "notes" and asked.message == "Who are you?"
    assert [(f.name, f.kind, f.required) for f in asked.fields] == [
        ("name", "string", True),
        ("age", "integer", True),
        ("subscribe", "boolean", False),
    ]
    assert "accept: {'name': 'Ada', 'age': 36, 'subscribe': False}" in result


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reach_the_server(tmp_path: Path, action: str) -> None:
    async def refuse(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer(action=action)  # type: ignore[arg-type]

    result, _, _ = await run_tool(tmp_path, "mcp__notes__ask_person", refuse)
    assert f"{action}: None" in result


async def test_a_headless_run_declines(tmp_path: Path) -> None:
    result, later, asked = await run_tool(tmp_path, "mcp__notes__ask_person")
    assert "decline: None" in result
    assert not asked
    notes = [e.message for e in later if isinstance(e, Notice)]
    assert any("headless" in m and "declined" in m for m in notes)


async def test_an_invalid_schema_ends_with_a_clear_message(tmp_path: Path) -> None:
    async def never(request: ElicitationRequest) -> ElicitationAnswer:
        raise AssertionError("a form with a nested object must not be shown")

    result, later, asked = await run_tool(tmp_path, "mcp__notes__ask_badly", never)
    assert not asked
    assert "invalid elicitation schema" in result
    notes = [e.message for e in later if isinstance(e, Notice)]
    assert any("cannot show" in m and "'address'" in m for m in notes)


async def test_an_answer_the_form_does_not_allow_is_not_sent(tmp_path: Path) -> None:
    async def cheat(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer(
            action="accept", content={"name": "Ada", "age": "old", "admin": True}
        )

    result, later, _ = await run_tool(tmp_path, "mcp__notes__ask_person", cheat)
    assert "cancel: None" in result
    assert any("not sent" in e.message for e in later if isinstance(e, Notice))


async def test_the_everything_servers_elicitation(tmp_path: Path) -> None:
    seen: list[ElicitationRequest] = []

    async def fill(request: ElicitationRequest) -> ElicitationAnswer:
        seen.append(request)
        content: dict[str, Any] = {}
        for f in request.fields:
            if f.enum and f.kind == "array":
                content[f.name] = [f.enum[0]]
            elif f.enum:
                content[f.name] = f.enum[0]
            elif f.kind == "boolean":
                content[f.name] = True
            elif f.kind in ("number", "integer"):
                content[f.name] = int(f.minimum or 1)
            elif f.format == "email":
                content[f.name] = "ada@example.com"
            elif f.format == "uri":
                content[f.name] = "https://example.com"
            elif f.format == "date":
                content[f.name] = "2026-01-01"
            elif f.format == "date-time":
                content[f.name] = "2026-01-01T00:00:00Z"
            elif f.required or f.min_length:
                content[f.name] = "x" * max(f.min_length or 1, 3)
        return ElicitationAnswer(action="accept", content=content)

    everything = node_server("mcp-server-everything")
    result, _, asked = await run_tool(
        tmp_path, "mcp__everything__trigger-elicitation-request", fill, everything=everything
    )
    assert asked and asked[0].fields, result
    assert "accept" in result.lower()


# --- the schema reader, attacked directly ----------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        None,
        [],
        {"type": "array", "items": {"type": "string"}},
        {"type": "object"},
        {"type": "object", "properties": {}},
        {"type": "object", "properties": {"a": {"type": "object"}}},
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}},
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}},
        {
            "type": "object",
            "properties": {"a": {"type": "array", "items": {"type": "integer", "enum": [1]}}},
        },
        {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
        {"type": "object", "properties": {"a": {"$ref": "#/defs/x"}}},
        {"type": "object", "properties": {"a": "string"}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": "a"},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
        {"type": "object", "properties": {"a": {"type": "integer", "enum": [1, 2]}}},
        {"type": "object", "properties": {"a": {"type": "string", "enum": ["x", 2]}}},
        {"type": "object", "properties": {"a": {"type": "string", "format": "regex"}}},
        {"type": "object", "properties": {"a": {"type": "number", "minimum": "0"}}},
        {"type": "object", "properties": {"a b": {"type": "string"}}},
        {"type": "object", "properties": {"<img src=x>": {"type": "string"}}},
        {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(51)}},
    ],
)
def test_schemas_a_form_cannot_show_are_refused(schema: Any) -> None:
    with pytest.raises(InvalidSchema):
        parse_schema(schema)


def test_answers_are_checked_against_the_form() -> None:
    fields = parse_schema(
        {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 5},
                "x": {"type": "number"},
                "c": {"type": "string", "enum": ["red", "blue"]},
                "m": {"type": "string", "format": "email", "maxLength": 40},
                "b": {"type": "boolean"},
                "many": {
                    "type": "array",
                    "items": {
                        "anyOf": [{"const": "p", "title": "P"}, {"const": "q", "title": "Q"}]
                    },
                    "maxItems": 1,
                },
            },
            "required": ["n"],
        }
    )
    assert check_answer(fields, {"n": 1, "many": ["q"]}) == {"n": 1, "many": ["q"]}
    assert check_answer(fields, {"n": "3", "x": "2.5", "c": "red", "b": False}) == {
        "n": 3,
        "x": 2.5,
        "c": "red",
        "b": False,
    }
    for bad in (
        {},
        {"n": 0},
        {"n": 6},
        {"n": 2.5},
        {"n": "nan"},
        {"n": "inf"},
        {"n": True},
        {"n": 1, "c": "green"},
        {"n": 1, "m": "not an address"},
        {"n": 1, "m": "a@b.c" + "x" * 40},
        {"n": 1, "b": "yes"},
        {"n": 1, "extra": 1},
        {"n": 1, "many": ["p", "q"]},
        {"n": 1, "many": ["r"]},
        {"n": 1, "many": [1]},
    ):
        with pytest.raises(ValueError):
            check_answer(fields, bad)
