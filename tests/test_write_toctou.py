"""Writes resolve their target again at the write: a symlink swapped in after
the permission check is refused, never followed out of the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mewcode_kernel.core.agent import Agent
from mewcode_kernel.core.conversation import Conversation
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest, Gate
from mewcode_kernel.core.tools import RunContext, ToolRegistry, builtin_tools
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call


def make_agent(root: Path, model: ScriptedModel, **kw) -> Agent:
    mode = kw.pop("mode", "default")
    return Agent.of(
        provider=model,
        tools=ToolRegistry(builtin_tools()),
        ctx=RunContext(root=root),
        gate=Gate(root=root, mode=mode),
        **kw,
    )


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("original")
    (root / "notes.txt").write_text("mine")
    return root, outside


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write_file", {"path": "notes.txt", "content": "pwned"}),
        ("edit_file", {"path": "notes.txt", "old_string": "original", "new_string": "pwned"}),
    ],
)
async def test_symlink_swapped_at_last_component_after_check(
    tree: tuple[Path, Path], tool: str, args: dict
) -> None:
    root, outside = tree

    async def swap_then_allow(req: ApprovalRequest) -> ApprovalAnswer:
        # The check saw a plain file inside the root; now it becomes a link out.
        (root / "notes.txt").unlink()
        (root / "notes.txt").symlink_to(outside / "victim.txt")
        return ApprovalAnswer(allow=True)

    model = ScriptedModel([reply(tool_call(tool, args)), reply("ok")])
    agent = make_agent(root, model, approval_handler=swap_then_allow)
    await collect(agent.run(Conversation(), "write"))
    assert (outside / "victim.txt").read_text() == "original"
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "outside the project" in result.content


async def test_directory_swapped_for_symlink_after_check(tree: tuple[Path, Path]) -> None:
    root, outside = tree

    async def swap_then_allow(req: ApprovalRequest) -> ApprovalAnswer:
        os.rmdir(root / "sub")
        (root / "sub").symlink_to(outside)
        return ApprovalAnswer(allow=True)

    model = ScriptedModel(
        [
            reply(tool_call("write_file", {"path": "sub/victim.txt", "content": "pwned"})),
            reply("ok"),
        ]
    )
    agent = make_agent(root, model, approval_handler=swap_then_allow)
    await collect(agent.run(Conversation(), "write"))
    assert (outside / "victim.txt").read_text() == "original"
    assert model.requests[1].messages[-1].tool_results[0].is_error


async def test_symlink_inside_the_project_is_written_through(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    (root / "alias.txt").symlink_to(root / "notes.txt")
    model = ScriptedModel(
        [reply(tool_call("write_file", {"path": "alias.txt", "content": "new"})), reply("ok")]
    )
    agent = make_agent(root, model, mode="acceptEdits")
    await collect(agent.run(Conversation(), "write"))
    assert (root / "notes.txt").read_text() == "new"


async def test_swap_inside_an_additional_directory_is_refused(
    tmp_path: Path, trusted_projects: None
) -> None:
    import json

    from mewcode_kernel.core import AgentSession
    from mewcode_kernel.core.config import load_config

    root = tmp_path / "proj"
    extra = tmp_path / "extra"
    outside = tmp_path / "outside"
    for d in (root / ".claude", extra, outside):
        d.mkdir(parents=True)
    (extra / "notes.txt").write_text("mine")
    (outside / "victim.txt").write_text("original")
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"additionalDirectories": [str(extra)]}})
    )

    async def swap_then_allow(req: ApprovalRequest) -> ApprovalAnswer:
        (extra / "notes.txt").unlink()
        (extra / "notes.txt").symlink_to(outside / "victim.txt")
        return ApprovalAnswer(allow=True)

    model = ScriptedModel(
        [
            reply(tool_call("write_file", {"path": str(extra / "notes.txt"), "content": "x"})),
            reply("ok"),
        ]
    )
    session = AgentSession(
        root,
        config=load_config(root, home=tmp_path / "home", env={}),
        provider=model,
        approval_handler=swap_then_allow,
    )
    await collect(session.run("write"))
    assert (outside / "victim.txt").read_text() == "original"
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "outside the project" in result.content


async def test_parent_creation_never_follows_a_swapped_link(tmp_path: Path) -> None:
    """A directory swapped for a symlink (and back) while ``write_file`` creates
    missing parents: 1,000 writes, none of them makes anything outside."""
    import threading

    from mewcode_kernel.core.errors import ToolError
    from mewcode_kernel.core.tools import write_file

    root, outside = tmp_path / "proj", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub.link").symlink_to(outside)
    stop = threading.Event()
    exchange = _exchange_names()

    def swap() -> None:
        while not stop.is_set():
            exchange(root / "sub", root / "sub.link")  # atomic: "sub" always exists

    ctx = RunContext(root=root)
    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    refused = 0
    try:
        for i in range(1000):
            try:
                await write_file.call(ctx, {"path": f"sub/a{i}/b/f.txt", "content": "x"})
            except ToolError:
                refused += 1
    finally:
        stop.set()
        swapper.join(timeout=10)
    assert not swapper.is_alive()
    assert list(outside.rglob("*")) == []
    assert refused < 1000  # the race was real: some writes landed inside


def _exchange_names():
    """``renameat2(RENAME_EXCHANGE)``: swap two names atomically (Linux)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, rename_exchange = -100, 2

    def exchange(a: Path, b: Path) -> None:
        if libc.renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange):
            raise OSError(ctypes.get_errno(), "renameat2 failed")

    return exchange
