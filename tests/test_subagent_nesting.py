"""Subagents that start subagents, through a real ``AgentSession`` and a
scripted model: a chain runs to ``subagents.max_depth`` (default 3) and one
level more is refused with a tool result that says why; each level's
tools, mode and read-only-ness are never wider than its parent's (attacks:
definitions asking for wider modes and for tools the parent lacks, forks
from inside a child, fork skills loaded by a child); and every level's
tokens count in ``/cost`` and on the task board."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.config import ProviderSettings, load_config
from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.messages import ToolResultBlock
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.subagents import SubagentRequest, subagent_toolset
from mewcode_kernel.core.tools import ToolRegistry, builtin_tools
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call


def _session(root: Path, model: ScriptedModel, *, mode: str = "default") -> AgentSession:
    home = root / "home"
    config = load_config(root, home=home, env={})
    settings = ProviderSettings(
        name="scripted", protocol="anthropic", model="scripted-1", context_window=200_000
    )
    tools = ToolRegistry(builtin_tools())
    s = AgentSession(
        root, config=config, provider=model, settings=settings, home=home, tools=tools, mode=mode
    )
    tools.add_toolset_now(s.skills)
    tools.add_toolset_now(subagent_toolset(s.subagents))
    return s


def _agent_file(root: Path, name: str, front: str, body: str = "Work.") -> None:
    folder = root / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: the {name} role\n{front}\n---\n{body}\n"
    )


def _delegate(kind: str, prompt: str = "go deeper", **extra: Any) -> Any:
    return tool_call(
        "Agent", {"description": "delegate", "prompt": prompt, "subagent_type": kind, **extra}
    )


def _results(request: ModelRequest) -> list[ToolResultBlock]:
    return request.messages[-1].tool_results


def _offered(request: ModelRequest) -> set[str]:
    return {t.name for t in request.tools}


def _config(root: Path, text: str) -> None:
    (root / ".mewcode.yaml").write_text(text)


# ---- depth ----------------------------------------------------------------------------


async def test_a_depth_three_chain_runs_and_depth_four_is_refused_clearly(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply(_delegate("general-purpose", "level 1")),  # the session's agent
            reply(_delegate("general-purpose", "level 2")),  # depth 1
            reply(_delegate("general-purpose", "level 3")),  # depth 2
            reply(_delegate("general-purpose", "level 4")),  # depth 3: refused
            reply("depth 3 answer"),
            reply("depth 2 answer"),
            reply("depth 1 answer"),
            reply("all done"),
        ]
    )
    s = _session(tmp_path, model)
    events = await collect(s.run("delegate as deep as you can"))
    assert events[-1].text == "all done"
    model.assert_all_used()
    # every level was offered Agent (nesting is on) and told its prompt
    for i in (1, 2, 3):
        assert "Agent" in _offered(model.requests[i])
        assert f"level {i}" in model.requests[i].messages[-1].text
    [refused] = _results(model.requests[4])
    assert refused.is_error
    assert "depth 4" in refused.content and "subagents.max_depth" in refused.content
    # each answer goes back up one level
    assert _results(model.requests[5])[0].content == "depth 3 answer"
    assert _results(model.requests[6])[0].content == "depth 2 answer"
    assert _results(model.requests[7])[0].content == "depth 1 answer"


@pytest.mark.parametrize("limit", [0, 1])
async def test_max_depth_zero_or_one_turns_nesting_off(tmp_path: Path, limit: int) -> None:
    _config(tmp_path, f"subagents:\n  max_depth: {limit}\n")
    model = ScriptedModel(
        [
            reply(_delegate("general-purpose", "level 1")),
            reply(_delegate("general-purpose", "level 2")),  # not offered: unknown
            reply("depth 1 answer"),
            reply("done"),
        ]
    )
    s = _session(tmp_path, model)
    await collect(s.run("go"))
    assert "Agent" not in _offered(model.requests[1])
    [result] = _results(model.requests[2])
    assert result.is_error and "Unknown tool 'Agent'" in result.content


async def test_a_lower_limit_is_kept_and_the_runner_refuses_past_it(tmp_path: Path) -> None:
    """The limit holds in the runner itself, whatever the tool list says: a
    caller at the deepest level is refused before anything starts."""
    _config(tmp_path, "subagents:\n  max_depth: 2\n")
    model = ScriptedModel(
        [
            reply(_delegate("general-purpose", "level 1")),
            reply(_delegate("general-purpose", "level 2")),
            reply(_delegate("general-purpose", "level 3")),  # refused
            reply("d2"),
            reply("d1"),
            reply("done"),
        ]
    )
    s = _session(tmp_path, model)
    await collect(s.run("go"))
    [refused] = _results(model.requests[3])
    assert refused.is_error and "depth 3" in refused.content and "2 levels" in refused.content
    # directly: an agent already at the limit asks the runner
    deep = s.agent.replaced(spec=s.agent.spec.narrowed(delegated=True).narrowed(delegated=True))
    request = SubagentRequest(prompt="x", description="x", subagent_type="general-purpose")
    with pytest.raises(ToolError, match="depth 3"):
        await s.subagents.run(deep.context_for(tool_call("Agent")), request)


@pytest.mark.parametrize("value", ["11", "-1", "'3'", "true", "2.5"])
def test_a_bad_max_depth_is_rejected(tmp_path: Path, value: str) -> None:
    _config(tmp_path, f"subagents:\n  max_depth: {value}\n")
    config = load_config(tmp_path, home=tmp_path / "home", env={})
    assert config.subagents.max_depth == 3  # the default stays
    assert any("max_depth" in str(w) for w in config.warnings)


async def test_a_child_cannot_fork_itself(tmp_path: Path) -> None:
    """A fork copies the session's conversation: a child asking for one
    would see what its own prompt never gave it."""
    model = ScriptedModel(
        [
            reply(_delegate("general-purpose", "level 1")),
            reply(tool_call("Agent", {"description": "fork", "prompt": "copy me"})),
            reply("d1"),
            reply("done"),
        ]
    )
    s = _session(tmp_path, model)
    await collect(s.run("secret plan: 42"))
    [refused] = _results(model.requests[2])
    assert refused.is_error and "cannot fork" in refused.content
    assert s.subagents.tasks() == []


# ---- permissions never widen ------------------------------------------------------------


async def test_a_grandchild_never_gets_a_tool_its_parent_lacks(tmp_path: Path) -> None:
    _agent_file(tmp_path, "reader", "tools: Read, Agent")
    _agent_file(
        tmp_path,
        "wide",
        "tools: Read, Bash, Write, Edit, write_file, bash, mcp__*, Agent, *\ndisallowedTools: []",
    )
    model = ScriptedModel(
        [
            reply(_delegate("reader", "level 1")),
            reply(_delegate("wide", "level 2")),
            reply(
                tool_call("bash", {"command": "echo pwned > pwned.txt"}),
                tool_call("write_file", {"path": "pwned.txt", "content": "x"}),
            ),
            reply("d2"),
            reply("d1"),
            reply("done"),
        ]
    )
    s = _session(tmp_path, model, mode="bypassPermissions")
    await collect(s.run("go"))
    reader, wide = _offered(model.requests[1]), _offered(model.requests[2])
    assert "bash" not in reader and "write_file" not in reader
    assert wide <= reader  # nothing the parent lacks
    assert "bash" not in wide and "write_file" not in wide and "edit_file" not in wide
    assert all(r.is_error for r in _results(model.requests[3]))
    assert not (tmp_path / "pwned.txt").exists()


@pytest.mark.parametrize("wider", ["bypassPermissions", "acceptEdits", "default", "dontAsk"])
async def test_a_grandchild_never_gets_a_wider_mode(tmp_path: Path, wider: str) -> None:
    """The child runs in plan mode (read-only); a grandchild asking for a
    more lenient mode keeps plan's limits: it cannot write by any route."""
    _agent_file(tmp_path, "planner", "permissionMode: plan")
    _agent_file(tmp_path, "doer", f"permissionMode: {wider}")
    model = ScriptedModel(
        [
            reply(_delegate("planner", "level 1")),
            reply(_delegate("doer", "level 2")),
            reply(
                tool_call("write_file", {"path": "out.txt", "content": "x"}),
                tool_call("bash", {"command": "echo x > out2.txt"}),
                tool_call("edit_file", {"path": "keep.txt", "old_string": "a", "new_string": "b"}),
            ),
            reply("d2"),
            reply("d1"),
            reply("done"),
        ]
    )
    (tmp_path / "keep.txt").write_text("a\n")
    s = _session(tmp_path, model, mode="bypassPermissions")
    await collect(s.run("go"))
    results = _results(model.requests[3])
    assert results and all(r.is_error for r in results)
    assert not (tmp_path / "out.txt").exists() and not (tmp_path / "out2.txt").exists()
    assert (tmp_path / "keep.txt").read_text() == "a\n"


async def test_a_fork_skill_loaded_by_a_child_stays_within_the_child(tmp_path: Path) -> None:
    skill = tmp_path / ".claude" / "skills" / "escalate"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: escalate\ndescription: Do it all.\nmode: fork\n"
        "allowed-tools: Bash, Write, Edit, Agent, Read\n---\nDo $ARGUMENTS.\n"
    )
    _agent_file(tmp_path, "reader", "tools: Read, Skill, Agent")
    model = ScriptedModel(
        [
            reply(_delegate("reader", "level 1")),
            reply(tool_call("load_skill", {"name": "escalate", "arguments": "everything"})),
            reply(tool_call("bash", {"command": "echo pwned > pwned.txt"})),  # the fork
            reply("fork answer"),
            reply("d1"),
            reply("done"),
        ]
    )
    s = _session(tmp_path, model, mode="bypassPermissions")
    await collect(s.run("go"))
    fork_tools = _offered(model.requests[2])
    assert fork_tools <= _offered(model.requests[1])
    assert "bash" not in fork_tools and "write_file" not in fork_tools
    assert _results(model.requests[3])[0].is_error
    assert not (tmp_path / "pwned.txt").exists()


# ---- costs up the chain -------------------------------------------------------------------


async def test_every_level_counts_in_cost_and_on_the_task_board(tmp_path: Path) -> None:
    """A child that moved to the background (still running after the
    foreground timeout) delegates: its task's usage on the board counts its
    grandchild's, and so does the session's."""
    _config(tmp_path, "subagents:\n  foreground_timeout: 0.3\n")
    parent = ScriptedModel([reply(_delegate("general-purpose", "level 1")), reply("moved on")])
    child = ScriptedModel(
        [
            reply(_delegate("general-purpose", "level 2")),  # waits until the move
            reply("d2"),  # the grandchild
            reply("d1"),
        ]
    )
    gate = asyncio.Event()
    s = _session(tmp_path, _Split(parent, _Gated(child, gate)))  # type: ignore[arg-type]
    await collect(s.run("go"))
    status = json.loads(_results(parent.requests[1])[0].content)
    assert status["status"] == "timed_out_to_background"
    gate.set()
    await s.tasks.wait(status["task_id"], timeout=30)
    [info] = s.subagents.tasks()
    assert info.state == "completed" and info.result == "d1"
    assert info.usage.input_tokens == 3 * 10  # its own two requests and its child's
    before = s.state.usage.input_tokens
    assert before == 5 * 10  # the session's two, the child's two, the grandchild's
    cost = await run_command(s, "/cost")
    assert cost.data["input_tokens"] == 50


async def test_a_background_child_does_not_nest(tmp_path: Path) -> None:
    parent = ScriptedModel(
        [reply(_delegate("general-purpose", "level 1", run_in_background=True)), reply("ok")]
    )
    child = ScriptedModel([reply("d1")])
    s = _session(tmp_path, _Split(parent, child))  # type: ignore[arg-type]
    await collect(s.run("go"))
    await s.tasks.wait(timeout=30)
    assert "Agent" not in _offered(child.requests[0])


async def test_a_foreground_chain_counts_every_level_in_cost(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply(_delegate("general-purpose", "level 1")),
            reply(_delegate("general-purpose", "level 2")),
            reply(_delegate("general-purpose", "level 3")),
            reply("d3"),
            reply("d2"),
            reply("d1"),
            reply("done"),
        ]
    )
    s = _session(tmp_path, model)
    events = await collect(s.run("go"))
    assert events[-1].usage.input_tokens == 70
    cost = await run_command(s, "/cost")
    assert cost.data["input_tokens"] == 70


class _Split:
    """The session's requests to ``parent``, every subagent's to ``child``
    (a background child runs beside its parent: one script each keeps the
    order of each)."""

    def __init__(self, parent: ScriptedModel, child: ScriptedModel) -> None:
        self.parent, self.child = parent, child

    @property
    def name(self) -> str:
        return "split"

    @property
    def model(self) -> str:
        return "scripted-1"

    def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        is_child = "as a subagent of MewCode" in request.system
        return (self.child if is_child else self.parent).stream(request)


class _Gated:
    """The scripted model, its first request held until ``gate`` is set."""

    def __init__(self, inner: ScriptedModel, gate: asyncio.Event) -> None:
        self.inner, self.gate, self.count = inner, gate, 0
        self.name, self.model = inner.name, inner.model

    async def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        self.count += 1
        if self.count == 1:
            await self.gate.wait()
        async for event in self.inner.stream(request):
            yield event
