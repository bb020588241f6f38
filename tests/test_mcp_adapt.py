"""MCP tool listings and results as MewCode sees them (``core/mcp/adapt``),
and the process a stdio server gets (``core/mcp/launch``): names that cannot
be offered, read-only only on ``readOnlyHint: true``, every kind of content
reaching the model, and no provider key in a server's environment."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    ToolAnnotations,
)
from mcp.types import (
    Tool as McpTool,
)

from mewcode_kernel.core.config import McpServerConfig
from mewcode_kernel.core.mcp import DEFAULT_ENV_ALLOWLIST, log_path, stdio_launch
from mewcode_kernel.core.mcp.adapt import MAX_IMAGE_BYTES, adapt_tool, to_output
from mewcode_kernel.core.messages import ImageBlock, TextBlock
from mewcode_kernel.core.permission.request import categorize
from mewcode_kernel.core.tools import Tool, ToolOutput

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


async def _never(ctx: Any, args: dict[str, Any], read_only: bool) -> ToolOutput:
    raise AssertionError("not called")


def adapt(**fields: Any) -> Tool | str:
    fields.setdefault("input_schema", {"type": "object"})
    return adapt_tool("srv", McpTool(**fields), _never)


# --- tools --------------------------------------------------------------------------


def test_names_are_namespaced_and_checked() -> None:
    ok = adapt(name="read_file")
    assert isinstance(ok, Tool) and ok.name == "mcp__srv__read_file"  # never a built-in's name
    for bad in ("has space", "semi;colon", "ünïcode", "dot.ted", "x" * 60):
        why = adapt(name=bad)
        assert isinstance(why, str) and "was skipped" in why and repr(bad) in why
    assert "64 characters" in str(adapt(name="x" * 60))
    assert "[A-Za-z0-9_-]" in str(adapt(name="has space"))


def test_description_schema_and_metadata() -> None:
    bare = adapt(name="t", description="", input_schema={})
    assert isinstance(bare, Tool)
    assert bare.description == "tool t from MCP server srv"
    assert bare.input_schema == {"type": "object"}
    assert (bare.family, bare.kind, bare.background_ok) == ("mcp", "exec", True)

    schema = {"properties": {"n": {"type": "integer"}, "path": {"type": "string"}}, "required": ["n", "path"]}  # fmt: skip
    described = adapt(name="t", description="  Does t.  ", input_schema=schema)
    assert isinstance(described, Tool)
    assert described.description == "Does t."
    assert described.input_schema["type"] == "object"  # added where a server left it out
    assert described.display_key == "path"  # the first required string argument


@pytest.mark.parametrize(
    ("annotations", "read_only"),
    [
        (ToolAnnotations(read_only_hint=True), True),
        (ToolAnnotations(read_only_hint=False), False),
        (ToolAnnotations(destructive_hint=False, idempotent_hint=True), False),
        (None, False),
    ],
)
def test_read_only_only_when_annotated(annotations: Any, read_only: bool) -> None:
    made = adapt(name="t", annotations=annotations)
    assert isinstance(made, Tool)
    assert made.read_only is read_only
    assert categorize(made) == ("read" if read_only else "exec")
    if annotations is not None:
        assert made.annotations == annotations.model_dump(by_alias=True, exclude_none=True)


def test_a_hint_that_is_not_true_is_not_trusted() -> None:
    # a server sending the string "true" (or a truthy number) does not get a read-only tool
    info = McpTool.model_validate(
        {"name": "t", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
    )
    assert adapt_tool("srv", info, _never).read_only  # type: ignore[union-attr]

    class Loose:
        name = "t"
        description = "d"
        input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012
        annotations: dict[str, Any] = {"readOnlyHint": "true"}  # noqa: RUF012

    made = adapt_tool("srv", Loose(), _never)
    assert isinstance(made, Tool) and not made.read_only and categorize(made) == "exec"


# --- results ------------------------------------------------------------------------


def test_text_images_and_errors() -> None:
    result = CallToolResult(
        content=[
            TextContent(type="text", text="one"),
            ImageContent(type="image", data=PNG, mime_type="image/png"),
        ],
        is_error=True,
    )
    out = to_output(result, source="srv/t")
    assert out.is_error
    assert out.content[0] == TextBlock(text="one")
    image = out.content[1]
    assert isinstance(image, ImageBlock) and image.source.data == PNG and image.note == "srv/t"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (ImageContent(type="image", data=PNG, mime_type="image/svg+xml"), "models read PNG, JPEG, GIF and WebP only"),
        (ImageContent(type="image", data="not base64!!", mime_type="image/png"), "not valid base64"),
        (ImageContent(type="image", data=base64.b64encode(b"x" * (MAX_IMAGE_BYTES + 1)).decode(), mime_type="image/png"), "larger than the 5 MB"),
        (AudioContent(type="audio", data=base64.b64encode(b"abcd").decode(), mime_type="audio/wav"), "[audio: audio/wav, 4 bytes from srv/t; not shown"),
        (EmbeddedResource(type="resource", resource=BlobResourceContents(uri="file:///x.zip", mime_type="application/zip", blob=base64.b64encode(b"zz").decode())), "[resource file:///x.zip: application/zip, 2 bytes"),
    ],
)  # fmt: skip
def test_what_a_model_cannot_read_becomes_a_note(block: Any, expected: str) -> None:
    [part] = to_output(CallToolResult(content=[block]), source="srv/t").content
    assert isinstance(part, TextBlock) and expected in part.text


def test_an_image_blob_resource_is_an_image_and_structured_content_is_kept() -> None:
    blob = EmbeddedResource(
        type="resource",
        resource=BlobResourceContents(uri="file:///p.png", mime_type="image/png", blob=PNG),
    )
    [part] = to_output(CallToolResult(content=[blob]), source="srv/t").content
    assert isinstance(part, ImageBlock) and part.note == "srv/t (file:///p.png)"

    structured = CallToolResult(content=[], structured_content={"temperature": 21})
    [text] = to_output(structured, source="srv/t").content
    assert isinstance(text, TextBlock) and '"temperature": 21' in text.text


# --- the process a stdio server gets ----------------------------------------------------


def server(**fields: Any) -> McpServerConfig:
    fields.setdefault("command", "srv")
    return McpServerConfig(name="s", type="stdio", **fields)


def test_environment_is_an_allowlist_without_provider_keys(tmp_path: Path) -> None:
    host = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "ANTHROPIC_API_KEY": "sk-ant",
        "OPENAI_API_KEY": "sk-oai",
        "ANTHROPIC_AUTH_TOKEN": "tok",
        "ANTHROPIC_BASE_URL": "http://proxy",
        "GITHUB_TOKEN": "ghp",
        "JAVA_HOME": "/opt/java",
    }
    launch = stdio_launch(
        server(env={"OWN": "1"}),
        root=tmp_path,
        host_env=host,
        allowlist=["JAVA_HOME", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"],  # keys named: still refused
    )
    assert dict(launch.env) == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "JAVA_HOME": "/opt/java",
        "OWN": "1",
    }
    assert set(DEFAULT_ENV_ALLOWLIST) >= {"PATH", "HOME", "LANG", "TMPDIR"}
    assert launch.cwd == tmp_path and launch.command == "srv"
    assert "sk-ant" not in repr(launch)


def test_command_and_args_are_taken_as_written(tmp_path: Path) -> None:
    launch = stdio_launch(
        server(command="${CMD}", args=("--token", "${TOKEN}", "$(whoami)")),
        root=tmp_path,
        host_env={"CMD": "rm", "TOKEN": "t"},
    )
    assert launch.command == "${CMD}" and launch.args == ("--token", "${TOKEN}", "$(whoami)")


def test_log_paths_stay_in_the_logs_folder(tmp_path: Path) -> None:
    for name in ("../../etc/passwd", "a/b", "ok-name_1"):
        path = log_path(tmp_path, name)
        assert path.parent == tmp_path / ".mewcode" / "logs"
        assert path.name.startswith("mcp-") and "/" not in path.name[4:]
