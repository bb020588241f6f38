"""Subagents through a real ``AgentSession``: definitions and their layers,
read-only roles that cannot write by any route, forks, background tasks with
notifications, stop and resume, records that survive the session, approvals
of background work, and a foreground run that moves to the background."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.config import ProviderSettings, load_config
from mewcode_kernel.core.events import TurnDone
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.subagents import DefinitionError, load_catalog, parse_definition
from mewcode_kernel.core.tools import RunContext, ToolRegistry, builtin_tools, tool
from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call

FIXTURES = Path(__file__).parent / "fixtures" / "subagents"
DEFINITIONS = sorted(
    p
    for p in FIXTURES.rglob("*.md")
    if p.name not in {"README.md", "MANIFEST.md", "FRONTMATTER_SURVEY.md"}
)


def session(root: Path, model: Any, **kw: Any) -> AgentSession:
    config = load_config(root, home=root / "home", env={})
    settings = ProviderSettings(
        name="scripted", protocol="anthropic", model="scripted-1", context_window=200_000,
        models={"haiku": "scripted-haiku"},
    )  # fmt: skip
    return AgentSession(
        root, config=config, provider=model, settings=settings, home=root / "home", **kw
    )


def texts(request: ModelRequest) -> str:
    return json.dumps([m.model_dump() for m in request.messages])


# ---- definitions --------------------------------------------------------------------


def test_the_fixture_copy_is_whole() -> None:
    assert len(DEFINITIONS) >= 125


@pytest.mark.parametrize("path", DEFINITIONS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_real_definition_parses_or_is_rejected_clearly(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        definition = parse_definition(text, path=path)
    except DefinitionError as exc:
        message = str(exc)
        assert message and (
            "name" in message or "frontmatter" in message or "description" in message
        )
        return
    assert definition.name and definition.description
    assert definition.system_prompt == definition.system_prompt.strip()
    assert definition.max_turns >= 1
    written = next((ln for ln in text.splitlines() if ln.startswith("description:")), "")
    value = written.removeprefix("description:").strip().strip("'\"")
    if ": " in value:  # an unquoted ": " that strict YAML refuses is read leniently
        assert value.split(": ")[0] in definition.description


def test_lenient_and_odd_definitions() -> None:
    hipaa = next(p for p in DEFINITIONS if p.name == "hipaa-compliance.md")
    parsed = parse_definition(hipaa.read_text(), path=hipaa)
    assert parsed.warnings and "line by line" in parsed.warnings[0]
    simplifier = next(
        p for p in DEFINITIONS if p.name == "code-simplifier.md" and "getsentry" in str(p)
    )
    assert parse_definition(simplifier.read_text()).name  # an HTML comment before the frontmatter
    with pytest.raises(DefinitionError, match="must start with a letter"):
        parse_definition("---\nname: 0-preflight\ndescription: x\n---\n")
    with pytest.raises(DefinitionError, match="at most 32"):
        parse_definition("---\nname: " + "a" * 33 + "\ndescription: x\n---\n")
    with pytest.raises(DefinitionError, match="'description' is missing"):
        parse_definition("---\nname: ok\n---\nbody")
    odd = parse_definition(
        "\ufeff---\nname: odd\ndescription: d\nmodel: fable\npermissionMode: yolo\n"
        "maxTurns: lots\ntools: [Read, Agent(plugin:x), mcp__gh__*]\n---\nbody\n"
    )
    assert (odd.model, odd.permission_mode, odd.max_turns) == ("inherit", "default", 25)
    assert odd.tools == ("Read", "Agent", "mcp__gh__*") and len(odd.warnings) == 3


def test_catalog_layers(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    (home / ".claude" / "agents").mkdir(parents=True)
    (root / ".mewcode" / "agents").mkdir(parents=True)
    (home / ".claude" / "agents" / "Explore.md").write_text(
        "---\nname: Explore\ndescription: the user's explorer\n---\nmine"
    )
    (root / ".mewcode" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: reviews\n---\nreview"
    )
    (root / ".mewcode" / "agents" / "broken.md").write_text("no frontmatter here")
    catalog = load_catalog(root, home=home)
    assert catalog.names == ["Explore", "general-purpose", "Plan", "reviewer"]
    assert catalog.resolve("Explore").description == "the user's explorer"  # type: ignore[union-attr]
    assert catalog.resolve("explore").name == "Explore"  # type: ignore[union-attr]
    assert [d.source for d in catalog.overridden] == ["built-in"]
    [problem] = catalog.problems
    assert "broken.md" in str(problem) and "frontmatter" in str(problem)


# ---- read-only roles ------------------------------------------------------------------


@tool(read_only=False, kind="exec", family="mcp", background_ok=True)
async def mcp__db__drop(ctx: RunContext, table: str) -> str:
    """Drop a table (an MCP tool not annotated read-only)."""
    raise AssertionError("a read-only role must never reach this")


async def test_explore_cannot_write_by_any_route(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep\n")
    model = ScriptedModel(
        [
            reply(
                tool_call(
                    "Agent",
                    {"description": "look", "prompt": "Find notes", "subagent_type": "Explore"},
                )
            ),
            reply(
                tool_call("write_file", {"path": "new.txt", "content": "x"}),
                tool_call(
                    "edit_file", {"path": "notes.txt", "old_string": "keep", "new_string": "gone"}
                ),
                tool_call("bash", {"command": "echo pwned > notes.txt"}),
                tool_call("bash", {"command": "bash -c 'echo x > f.txt'"}),
                tool_call("bash", {"command": "git commit -m x"}),
                tool_call("mcp__db__drop", {"table": "users"}),
                tool_call("install_skill", {"url": "https://github.com/o/r/tree/main/s"}),
                tool_call("bash", {"command": "ls"}),
            ),
            reply("notes.txt says keep."),
            reply("The explorer found it."),
        ]
    )
    tools = ToolRegistry([*builtin_tools(), mcp__db__drop])
    from mewcode_kernel.core.subagents import subagent_toolset

    s = session(tmp_path, model, tools=tools, mode="bypassPermissions")
    tools.add_toolset_now(s.skills)
    tools.add_toolset_now(subagent_toolset(s.subagents))
    events = await collect(s.run("explore, and install a skill if one helps"))
    assert events[-1].text == "The explorer found it."
    assert (tmp_path / "notes.txt").read_text() == "keep\n"
    assert not (tmp_path / "new.txt").exists() and not (tmp_path / "f.txt").exists()
    child_request = model.requests[2]
    offered = [t.name for t in model.requests[1].tools]
    assert "write_file" not in offered and "edit_file" not in offered and "Agent" not in offered
    assert model.requests[1].model == "scripted-haiku"  # Explore asks for haiku
    results = child_request.messages[-1].tool_results
    assert [r.is_error for r in results] == [True] * 7 + [False]
    for r in results[2:7]:
        assert "read-only role" in r.content
    assert "notes.txt" in results[7].content  # ls ran
    answer = model.requests[3].messages[-1].tool_results[0]
    assert answer.content == "notes.txt says keep." and not answer.is_error


# ---- forks, background tasks, notifications ---------------------------------------------


async def test_a_fork_carries_the_history_and_reports_back(tmp_path: Path) -> None:
    parent = ScriptedModel(
        [
            reply("Noted: the tests live in tests/."),
            reply(tool_call("Agent", {"description": "check", "prompt": "Run the checks"})),
            reply("Launched a fork."),
            reply("The fork says all pass."),
        ]
    )
    fork = ScriptedModel([reply("Scope: checked the tests. All pass.")])
    gate = asyncio.Event()  # the fork answers once the parent's turn is over
    s = session(tmp_path, _Split(parent, _Blocking(fork, gate, block_at=1)))
    await collect(s.run("Remember: tests are in tests/."))
    await collect(s.run("Fork yourself to check them."))
    result = parent.requests[2].messages[-1].tool_results[0]
    launched = json.loads(result.content)
    assert launched["status"] == "async_launched" and launched["name"] == "fork"
    assert "<task-notification>" not in texts(parent.requests[2])
    gate.set()
    await s.tasks.wait(launched["task_id"], timeout=10)
    [fork_request] = fork.requests
    history = texts(fork_request)
    assert "Remember: tests are in tests/." in history  # the parent's live history
    assert "[forked, skipped]" in history  # its own Agent call closed
    assert "<fork_boilerplate>" in history and "Run the checks" in fork_request.messages[-1].text
    assert fork_request.system == parent.requests[0].system  # the parent's prompt: cache shared
    assert "Agent" not in [t.name for t in fork_request.tools]
    # the finished task reaches the parent on its next request, and its usage counts
    before = s.state.usage
    await collect(s.run("Any news?"))
    news = parent.requests[3].messages[-1].text
    assert "<task-notification>" in news and f"Task {launched['task_id']}" in news
    assert "Scope: checked the tests. All pass." in news
    assert s.state.usage.input_tokens == before.input_tokens + 10  # the parent's last request
    assert before.input_tokens == 4 * 10  # three parent requests and the fork's


async def test_stop_resume_and_records_across_sessions(tmp_path: Path) -> None:
    parent = ScriptedModel(
        [
            reply(
                tool_call(
                    "Agent",
                    {
                        "description": "a",
                        "prompt": "Count files",
                        "subagent_type": "general-purpose",
                        "run_in_background": True,
                        "name": "counter",
                    },
                ),
                tool_call(
                    "Agent",
                    {
                        "description": "b",
                        "prompt": "Wait",
                        "subagent_type": "general-purpose",
                        "run_in_background": True,
                        "name": "waiter",
                    },
                ),
            ),
            reply("Two tasks launched."),
        ]
    )
    children = ScriptedModel([reply("12 files.")])
    s = session(tmp_path, _Split(parent, _Blocking(children, asyncio.Event())))
    await collect(s.run("launch"))
    ids = {t.name: t.id for t in s.subagents.tasks()}
    await s.tasks.wait(ids["counter"], timeout=10)
    stop = await _call_tool(s, "TaskStop", {"task_id": "waiter"})
    assert json.loads(stop)["status"] == "cancellation_requested"
    await s.tasks.wait(ids["waiter"], timeout=10)
    states = {t.name: t.state for t in s.subagents.tasks()}
    assert states == {"counter": "completed", "waiter": "cancelled"}
    listed = json.loads(await _call_tool(s, "TaskList", {}))
    assert {t["name"] for t in listed} == {"counter", "waiter"}
    got = json.loads(await _call_tool(s, "TaskGet", {"task_id": ids["counter"]}))
    assert got["result"] == "12 files." and got["status"] == "completed"
    assert got["role"] == "general-purpose" and got["end_time"]
    unknown = await _call_tool(s, "SendMessage", {"name": "nobody", "message": "hi"}, error=True)
    assert "no subagent task named 'nobody'" in unknown
    cancelled = await _call_tool(s, "SendMessage", {"name": "waiter", "message": "hi"}, error=True)
    assert "is cancelled; only a completed task can be resumed" in cancelled
    session_id = s.session_id
    assert session_id is not None
    await s.aclose()

    # the records survive: a new session resumes, sees the tasks, resumes a completed one
    folder = tmp_path / ".mewcode" / "sessions" / session_id
    assert ids["counter"] in (folder / "tasks.jsonl").read_text()
    transcript = (folder / "subagents" / f"{ids['counter']}.jsonl").read_text()
    assert "Count files" in transcript and "12 files." in transcript
    children2 = ScriptedModel([reply("Now 13 files.")])
    s2 = session(tmp_path, _Split(ScriptedModel([]), children2))
    await s2.resume(session_id)
    shown = await run_command(s2, "/tasks")
    assert "counter" in shown.markdown and "completed" in shown.markdown
    assert "cancelled" in shown.markdown
    resumed = json.loads(
        await _call_tool(s2, "SendMessage", {"name": "counter", "message": "Count again"})
    )
    assert resumed == {"task_id": ids["counter"], "status": "resumed"}
    await s2.tasks.wait(ids["counter"], timeout=10)
    [again] = children2.requests
    assert "Count files" in texts(again) and "12 files." in texts(again)  # its own history
    assert again.messages[-1].text == "Count again"
    assert s2.tasks.get(ids["counter"]).result == "Now 13 files."  # type: ignore[union-attr]
    await s2.aclose()


async def test_eight_background_subagents_with_a_cap_of_three(tmp_path: Path) -> None:
    (tmp_path / ".mewcode.yaml").write_text("tasks:\n  max_running: 3\n")
    launches = [
        tool_call(
            "Agent",
            {
                "description": f"job {i}",
                "prompt": f"Job {i}: Wait",
                "subagent_type": "general-purpose",
                "run_in_background": True,
                "name": f"job{i}",
            },
        )
        for i in range(8)
    ]
    parent = ScriptedModel([reply(*launches), reply("Eight launched.")])
    children = ScriptedModel([reply(f"done {i}") for i in range(8)])
    gate = asyncio.Event()
    blocking = _Blocking(children, gate)
    s = session(tmp_path, _Split(parent, blocking))
    await collect(s.run("launch eight"))
    tasks = s.subagents.tasks()
    assert len(tasks) == 8
    await asyncio.wait_for(blocking.reached(3), 10)  # three ask the model and wait
    states = sorted(t.state for t in s.subagents.tasks())
    assert states == ["queued"] * 5 + ["running"] * 3, states
    gate.set()  # each one that finishes lets a queued one start
    for task in tasks:
        await s.tasks.wait(task.id, timeout=10)
    assert s.tasks.peak_running == 3  # the manager's own count of the most at once
    assert blocking.count == 8
    assert {t.state for t in s.subagents.tasks()} == {"completed"}
    await s.aclose()


async def test_background_approvals_go_to_the_front_end_or_time_out(tmp_path: Path) -> None:
    (tmp_path / ".mewcode.yaml").write_text("tasks:\n  approval_timeout: 0.2\n")
    asked: list[ApprovalRequest] = []

    async def never_answers(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        await asyncio.Event().wait()
        raise AssertionError

    parent = ScriptedModel(
        [
            reply(
                tool_call(
                    "Agent",
                    {
                        "description": "w",
                        "prompt": "Make f",
                        "subagent_type": "general-purpose",
                        "run_in_background": True,
                    },
                )
            ),
            reply("Launched."),
        ]
    )
    child = ScriptedModel(
        [
            reply(tool_call("write_file", {"path": "f.txt", "content": "x"})),
            reply("Could not write."),
        ]
    )
    s = session(tmp_path, _Split(parent, child))
    s.background_approval_handler = never_answers
    await collect(s.run("go"))
    [task] = s.subagents.tasks()
    await s.tasks.wait(task.id, timeout=10)
    assert asked and asked[0].task_id == task.id and asked[0].call.name == "write_file"
    denied = child.requests[1].messages[-1].tool_results[0]
    assert denied.is_error and "nobody answered within 0.2 s" in denied.content
    assert not (tmp_path / "f.txt").exists()


async def test_a_slow_foreground_run_moves_to_the_background(tmp_path: Path) -> None:
    (tmp_path / ".mewcode.yaml").write_text("subagents:\n  foreground_timeout: 0.3\n")
    gate = asyncio.Event()
    parent = ScriptedModel(
        [
            reply(
                tool_call(
                    "Agent",
                    {
                        "description": "slow",
                        "prompt": "Think long",
                        "subagent_type": "general-purpose",
                    },
                )
            ),
            reply("Moved on."),
        ]
    )
    child = ScriptedModel(
        [
            reply(
                tool_call("glob", {"pattern": "*"}), usage=Usage(input_tokens=7, output_tokens=3)
            ),
            reply("Thought long.", usage=Usage(input_tokens=5, output_tokens=1)),
        ]
    )
    s = session(tmp_path, _Split(parent, _Blocking(child, gate, block_at=2)))
    events = await collect(s.run("think"))
    assert isinstance(events[-1], TurnDone) and events[-1].text == "Moved on."
    status = json.loads(parent.requests[1].messages[-1].tool_results[0].content)
    assert status["status"] == "timed_out_to_background"
    info = s.tasks.get(status["task_id"])
    assert info is not None and info.state == "running" and info.tool_count == 1  # progress kept
    gate.set()
    await s.tasks.wait(status["task_id"], timeout=10)
    done = s.tasks.get(status["task_id"])
    assert done is not None and done.state == "completed" and done.result == "Thought long."
    assert done.usage == Usage(input_tokens=12, output_tokens=4)


async def test_claude_agents_are_used_unchanged(tmp_path: Path) -> None:
    source = next(p for p in DEFINITIONS if p.name == "code-reviewer.md")
    (tmp_path / ".claude" / "agents").mkdir(parents=True)
    (tmp_path / ".claude" / "agents" / "code-reviewer.md").write_bytes(source.read_bytes())
    definition = parse_definition(source.read_text())
    model = ScriptedModel(
        [
            reply(
                tool_call(
                    "Agent",
                    {"description": "review", "prompt": "Review", "subagent_type": definition.name},
                )
            ),
            reply("Looks fine."),
            reply("Reviewed."),
        ]
    )
    s = session(tmp_path, model)
    listed = {a["name"]: a for a in (await run_command(s, "/agents")).data}
    assert listed[definition.name]["source"] == "project"
    assert listed[definition.name]["path"] == str(
        tmp_path / ".claude" / "agents" / "code-reviewer.md"
    )
    await collect(s.run("review it"))
    child = model.requests[1]
    assert child.system.startswith(definition.system_prompt[:200])
    assert model.requests[2].messages[-1].tool_results[0].content == "Looks fine."


# ---- helpers ---------------------------------------------------------------------------


class _Split:
    """Parent requests to ``parent``, subagent requests (a fork's, or a role's
    whose system prompt says it is a subagent) to ``child``."""

    def __init__(self, parent: ScriptedModel, child: ScriptedModel) -> None:
        self.parent, self.child = parent, child

    @property
    def name(self) -> str:
        return "split"

    @property
    def model(self) -> str:
        return "scripted-1"

    def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        is_child = (
            "<fork_boilerplate>" in texts(request) or "as a subagent of MewCode" in request.system
        )
        return (self.child if is_child else self.parent).stream(request)


class _Blocking:
    """The scripted model, except that request number ``block_at`` (1-based)
    waits for ``gate``; by default every request that says Wait does."""

    def __init__(self, inner: ScriptedModel, gate: asyncio.Event, block_at: int | None = None):
        self.inner, self.gate, self.block_at = inner, gate, block_at
        self.count = 0
        self._counted = asyncio.Condition()

    async def reached(self, count: int) -> None:
        """Return once ``count`` requests have arrived."""
        async with self._counted:
            await self._counted.wait_for(lambda: self.count >= count)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    async def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        self.count += 1
        async with self._counted:
            self._counted.notify_all()
        waits = (
            self.count == self.block_at
            if self.block_at
            else request.messages[-1].text.endswith("Wait")
        )
        if waits:
            await self.gate.wait()
        async for event in self.inner.stream(request):
            yield event


async def _call_tool(
    s: AgentSession, name: str, args: dict[str, Any], *, error: bool = False
) -> str:
    from mewcode_kernel.core.errors import ToolError
    from mewcode_kernel.core.messages import ToolUseBlock

    call = ToolUseBlock(id=f"direct-{name}", name=name, input=args)
    tool_ = s.tools.get(name)
    assert tool_ is not None
    try:
        out = await tool_.call(s.agent.context_for(call), args)
    except ToolError as exc:
        assert error, str(exc)
        return str(exc)
    assert not error
    return out  # type: ignore[return-value]
