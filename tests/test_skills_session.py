"""Skills in an ``AgentSession`` driven by a scripted model: the catalog in a
stable system prompt, ``load_skill`` activation carried on later turns,
re-activation in place, ``/clear`` and resume clearing it, ``/<skill>``
commands, and the fork seam (refused clearly without a runner; a runner
gets the skill's tools, context and model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.events import Notice
from mewcode_kernel.core.messages import Message, TextBlock
from mewcode_kernel.core.skills import ForkRequest
from mewcode_kernel.core.tools import RunContext, ToolRegistry, builtin_tools
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call


def write_skill(folder: Path, name: str, front: str = "", body: str = "Do it.") -> Path:
    d = folder / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\n{front}\n---\n{body}\n")
    return d


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    skills = root / ".claude" / "skills"
    write_skill(
        skills,
        "changelog",
        "description: Write a changelog entry.",
        "Write an entry for $ARGUMENTS.",
    )
    write_skill(
        skills,
        "review",
        "description: Review code.\nallowed-tools: Read, Grep",
        "Review carefully.",
    )
    write_skill(
        skills,
        "manual",
        "description: Only by hand.\ndisable-model-invocation: true",
        "Manual steps.",
    )
    write_skill(
        skills, "hidden", "description: Agent only.\nuser-invocable: false", "Hidden steps."
    )
    write_skill(
        skills,
        "audit",
        "description: Audit in a subagent.\nmode: fork\nfork_context: recent\nmodel: claude-haiku-4-5\n"
        "allowed-tools: Read, Grep",
        "Audit $ARGUMENTS.",
    )  # fmt: skip
    return root


def session(root: Path, model: ScriptedModel, **kw) -> AgentSession:
    home = root.parent / "home"
    config = load_config(root, home=home, env={})
    return AgentSession(root, config=config, provider=model, home=home, **kw)


def texts(message: Message) -> list[str]:
    return [b.text for b in message.content if isinstance(b, TextBlock)]


def first_user(model: ScriptedModel, request: int) -> Message:
    """The user message that started the turn of request ``request``."""
    return [m for m in model.requests[request].messages if m.role == "user"][-1]


def active_block(message: Message) -> str | None:
    return next((t for t in texts(message) if t.startswith("<active-skills>")), None)


async def test_the_catalog_is_in_a_stable_system_prompt(root: Path) -> None:
    model = ScriptedModel([reply(tool_call("read_file", {"path": "x"})), reply("a"), reply("b")])
    s = session(root, model)
    await collect(s.run("one"))
    await collect(s.run("two"))
    systems = {r.system for r in model.requests}
    assert len(systems) == 1
    system = systems.pop()
    assert "# Skills" in system
    for line in ("- **audit**: Audit in a subagent.", "- **changelog**: Write a changelog entry.",
                 "- **hidden**: Agent only.", "- **review**: Review code."):  # fmt: skip
        assert line in system
    assert "manual" not in system  # disable-model-invocation: only the person runs it
    assert system.index("**audit**") < system.index("**changelog**") < system.index("**review**")
    # load_skill is offered (there are skills); install_skill only when turned on or asked for
    assert [t.name for t in model.requests[0].tools][6:8] == ["load_skill", "Agent"]
    load, install = s.tools.get("load_skill"), s.skills.install_skill
    assert load is not None and "install_skill" not in s.tools
    assert (load.system, load.read_only, load.default_allow, load.family) == (
        True,
        True,
        True,
        "skill",
    )
    assert (install.read_only, install.kind) == (False, "edit")


async def test_load_skill_activates_and_later_turns_carry_it(root: Path) -> None:
    model = ScriptedModel(
        [
            reply(tool_call("load_skill", {"name": "Changelog", "args": "v1.2"})),
            reply("Entry written."),
            reply("Next."),
            reply("And next."),
        ]
    )
    s = session(root, model)
    await collect(s.run("Add a changelog entry"))
    result = model.requests[1].messages[-1].tool_results[0]
    assert not result.is_error
    assert "Skill 'changelog' is now active" in result.content
    assert "Write an entry for v1.2." in result.content
    assert "Skill directory: .claude/skills/changelog" in result.content
    assert active_block(first_user(model, 1)) is None  # this turn began before the activation
    await collect(s.run("Anything else?"))
    await collect(s.run("Third turn"))
    for n in (2, 3):
        block = active_block(first_user(model, n))
        assert block is not None and "## Skill: changelog" in block
        assert "Write an entry for v1.2." in block
        assert texts(first_user(model, n))[0].startswith("<environment>")  # beside the environment
    assert texts(first_user(model, 3))[-1] == "Third turn"


async def test_reactivation_replaces_in_place_keeping_the_first_order(root: Path) -> None:
    model = ScriptedModel(
        [
            reply(tool_call("load_skill", {"name": "changelog", "args": "v1"})),
            reply(tool_call("load_skill", {"name": "review"})),
            reply(tool_call("load_skill", {"name": "changelog", "args": "v2"})),
            reply("done"),
            reply("next"),
        ]
    )
    s = session(root, model)
    await collect(s.run("go"))
    assert list(s.state.active_skills) == ["changelog", "review"]
    await collect(s.run("next"))
    block = active_block(first_user(model, 4)) or ""
    assert block.count("## Skill: changelog") == 1 and "entry for v2." in block
    assert "entry for v1." not in block
    assert block.index("## Skill: changelog") < block.index("## Skill: review")
    assert "designed to use only these tools: Read, Grep (here: read_file, glob, grep)" in block


@pytest.mark.parametrize("how", ["clear", "resume"])
async def test_clear_and_resume_drop_the_active_skills(root: Path, how: str) -> None:
    model = ScriptedModel(
        [
            reply(tool_call("load_skill", {"name": "review"})),
            reply("ok"),
            reply("old"),
            reply("after"),
        ]
    )
    s = session(root, model)
    await collect(s.run("review it"))
    await collect(s.run("more"))
    assert active_block(first_user(model, 2)) is not None
    first = s.session_id
    if how == "clear":
        await run_command(s, "/clear")
    else:
        assert first is not None
        await s.resume(first)
    assert s.state.active_skills == {}
    await collect(s.run("and now?"))
    assert active_block(first_user(model, 3)) is None


async def test_load_skill_reads_the_file_again(root: Path) -> None:
    model = ScriptedModel([reply(tool_call("load_skill", {"name": "review"})), reply("ok")] * 2)
    s = session(root, model)
    await collect(s.run("one"))
    (root / ".claude/skills/review/SKILL.md").write_text("---\nname: review\n---\nReview v2.\n")
    await collect(s.run("two"))
    assert model.requests[3].messages[-1].tool_results[0].content.endswith("Review v2.")


async def test_refusals_come_back_as_error_results(root: Path) -> None:
    model = ScriptedModel(
        [
            reply(
                tool_call("load_skill", {"name": "manual"}),
                tool_call("load_skill", {"name": "nope"}),
            ),
            reply("ok"),
        ]
    )
    s = session(root, model)
    await collect(s.run("go"))
    manual, nope = model.requests[1].messages[-1].tool_results
    assert manual.is_error and "can only be run by the user (/manual)" in manual.content
    assert (
        nope.is_error and "no skill called 'nope'" in nope.content and "changelog" in nope.content
    )
    assert s.state.active_skills == {}


async def test_a_slash_skill_is_the_turns_prompt_and_stays_active(root: Path) -> None:
    model = ScriptedModel([reply("Written."), reply("Later.")])
    s = session(root, model)
    result = await run_command(s, "/CHANGELOG the 2.0 release")
    assert not result.error and result.prompt is not None
    assert result.prompt.endswith("Write an entry for the 2.0 release.")
    await collect(s.run(result.prompt))
    first = texts(first_user(model, 0))
    assert first[-1] == result.prompt
    assert sum("Write an entry for the 2.0 release." in t for t in first) == 1  # not repeated
    await collect(s.run("later"))
    assert "Write an entry for the 2.0 release." in (active_block(first_user(model, 1)) or "")


async def test_slash_skill_arguments_may_follow_on_the_next_lines(root: Path) -> None:
    s = session(root, ScriptedModel())
    result = await run_command(s, "/review\nsrc/app.py\nand tests/")
    assert result.prompt is not None
    assert result.prompt.endswith("Review carefully.\n\n## User Request\n\nsrc/app.py\nand tests/")


async def test_slash_refusals(root: Path) -> None:
    s = session(root, ScriptedModel())
    hidden = await run_command(s, "/hidden")
    assert hidden.error and "meant for the agent only" in hidden.markdown
    manual = await run_command(s, "/manual")
    assert (
        not manual.error and manual.prompt is not None and manual.prompt.endswith("Manual steps.")
    )
    unknown = await run_command(s, "/nosuch")
    assert unknown.error and "Unknown command `/nosuch`" in unknown.markdown


async def test_builtin_commands_win_over_a_skill_of_the_same_name(root: Path) -> None:
    write_skill(root / ".claude/skills", "help", "description: shadowed")
    s = session(root, ScriptedModel())
    result = await run_command(s, "/help")
    assert result.prompt is None and "| `/skills [reload]` |" in result.markdown


async def test_skills_command_lists_source_and_mode(root: Path) -> None:
    s = session(root, ScriptedModel())
    result = await run_command(s, "/skills")
    rows = {r["name"]: r for r in result.data}
    assert rows["audit"]["mode"] == "fork" and rows["changelog"]["mode"] == "inline"
    assert (
        "| `/audit` | project (`.claude/skills/audit`) | fork (context recent, model claude-haiku-4-5) |"
        in result.markdown
    )
    assert (
        "(only you can run it)" in result.markdown
        and "(only the agent loads it)" in result.markdown
    )
    write_skill(root / ".agents/skills", "newer", "description: Added later.")
    assert "newer" not in (await run_command(s, "/skills")).markdown
    assert "`/newer`" in (await run_command(s, "/skills reload")).markdown


async def test_a_skill_naming_a_missing_tool_is_reported_at_start(root: Path) -> None:
    write_skill(root / ".claude/skills", "web", "allowed-tools: WebFetch, Read")
    model = ScriptedModel([reply("a"), reply("b")])
    s = session(root, model)
    first = [e.message for e in await collect(s.run("one")) if isinstance(e, Notice)]
    assert any(
        "skill 'web' (.claude/skills/web) names tools that do not exist here: WebFetch" in m
        for m in first
    )
    second = [e.message for e in await collect(s.run("two")) if isinstance(e, Notice)]
    assert not any("WebFetch" in m for m in second)  # once


async def test_plan_mode_offers_load_skill_but_not_install(root: Path) -> None:
    model = ScriptedModel([reply("planned")])
    s = session(root, model, mode="plan")
    await collect(s.run("plan"))
    offered = [t.name for t in model.requests[0].tools]
    assert "load_skill" in offered and "install_skill" not in offered


async def test_a_registry_given_by_the_caller_gets_no_skills(root: Path) -> None:
    model = ScriptedModel([reply("ok")])
    s = session(root, model, tools=ToolRegistry(builtin_tools()))
    await collect(s.run("hi"))
    assert "# Skills" not in model.requests[0].system
    assert "load_skill" not in [t.name for t in model.requests[0].tools]


# --- fork mode: the seam ------------------------------------------------------------------


async def test_a_fork_skill_without_a_runner_is_refused_clearly(root: Path) -> None:
    model = ScriptedModel(
        [reply(tool_call("load_skill", {"name": "audit", "args": "auth"})), reply("ok")]
    )
    s = session(root, model)
    s.skills.fork_runner = None  # a session without the subagent runner
    await collect(s.run("audit the auth module"))
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error
    assert (
        "skill 'audit' runs in fork mode (as a subagent), which needs the subagent runner"
        in result.content
    )
    assert s.state.active_skills == {}  # never run inline instead
    command = await run_command(s, "/audit auth")
    assert (
        command.error and "needs the subagent runner" in command.markdown and command.prompt is None
    )


class RecordingRunner:
    def __init__(self) -> None:
        self.calls: list[tuple[ForkRequest, RunContext | None]] = []

    async def run_fork(self, request: ForkRequest, ctx: RunContext | None) -> str:
        self.calls.append((request, ctx))
        return f"Audit of {request.args}: 2 findings."


async def test_a_fork_skill_goes_to_the_runner_with_its_tools_context_and_model(root: Path) -> None:
    model = ScriptedModel(
        [reply(tool_call("load_skill", {"name": "audit", "args": "auth"})), reply("ok")]
    )
    s = session(root, model)
    runner = RecordingRunner()
    s.skills.fork_runner = runner
    await collect(s.run("audit the auth module"))
    result = model.requests[1].messages[-1].tool_results[0]
    assert not result.is_error and result.content == "Audit of auth: 2 findings."
    request, ctx = runner.calls[0]
    assert (request.skill.name, request.allowed_tools, request.fork_context, request.model) == (
        "audit", ("Read", "Grep"), "recent", "claude-haiku-4-5",
    )  # fmt: skip
    assert request.prompt.endswith("Audit auth.") and "designed to use only" not in request.prompt
    assert ctx is not None and ctx.call is not None and ctx.call.name == "load_skill"
    assert s.state.active_skills == {}
    command = await run_command(s, "/audit billing")
    assert command.markdown == "Audit of billing: 2 findings." and command.prompt is None
    assert runner.calls[1][1] is None
