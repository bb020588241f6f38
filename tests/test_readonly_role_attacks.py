"""Security by attack: a read-only role (``Explore``, ``Plan``, a fork skill
they load) tries to write or run a program through commands whose text
looks like reading (an output operand, an attached or abbreviated output
option, a pager option), or through delegation that would hand it wider
permissions than it has.

Without the OS sandbox the role's commands must pass a short allowlist read
by shape; with it, they also run with the file system read-only, so even a
command the reading misses cannot write, and a role is never offered the
unsandboxed retry a person can approve for others.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.config import ProviderSettings, SandboxSettings, load_config
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.sandbox import Sandbox
from mewcode_kernel.core.tools import RunContext, bash
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call

from ._sandboxed import needs_bwrap

EVIL = "#!/bin/sh\ntouch PWNED\n"

# fmt: off
WRITERS: list[tuple[str, str]] = [
    ("uniq output operand", "uniq in.txt out.txt"),
    ("uniq output operand after --", "uniq -- in.txt out.txt"),
    ("sort attached -o", "sort -oout.txt in.txt"),
    ("sort -o in a cluster", "sort -ro out.txt in.txt"),
    ("sort --output abbreviated", "sort --outp=out.txt in.txt"),
    ("sort --o", "sort --o out.txt in.txt"),
    ("sort --compress-program", "sort --compress-prog=./evil.sh -S 1 in.txt"),
    ("git log --output", "git log --output=out.txt"),
    ("git log --output abbreviated", "git log --outp=out.txt"),
    ("git diff --output abbreviated", "git diff --out out.txt"),
    ("xxd output operand", "xxd in.txt out.txt"),
    ("xxd -r", "xxd -r -p in.txt out.txt"),
    ("xxd -r in a cluster", "xxd -pr in.txt"),
    ("git grep -O", "git grep -O./evil.sh keep"),
    ("git grep -O in a cluster", "git grep -iO./evil.sh keep"),
    ("git grep --open-files-in-pager", "git grep --open-files-in-pager=./evil.sh keep"),
    ("git grep --open-files abbreviated", "git grep --open-files=./evil.sh keep"),
    ("git -c pager", "git -c core.pager=./evil.sh -p log"),
    ("git -p", "git -p log"),
    ("git --paginate abbreviated", "git --pag log"),
    ("git --ext-diff", "git log -p --ext-diff"),
    ("tree -o", "tree -o out.txt"),
    ("tree -o in a cluster", "tree -ao out.txt"),
    ("find -fprint", "find . -fprint out.txt"),
    ("rg --pre", "rg --pre ./evil.sh keep"),
    ("rg --pre=", "rg --pre=./evil.sh keep"),
    ("file -C", "file -C -m in.txt"),
    # (date and hostname are off the list too: as root they set the clock and the name)
    ("less with a preprocessor", "LESSOPEN='|./evil.sh %s' less in.txt"),
]
# fmt: on


def project(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "in.txt").write_text("keep\nkeep\n")
    evil = root / "evil.sh"
    evil.write_text(EVIL)
    evil.chmod(0o755)
    os.system(f"cd {root} && git init -q && git add in.txt && git -c user.name=t "
              "-c user.email=t@t commit -qm init")  # fmt: skip
    return root


def untouched(root: Path) -> None:
    assert not (root / "out.txt").exists()
    assert not (root / "PWNED").exists()
    assert (root / "in.txt").read_text() == "keep\nkeep\n"


async def _yes(req: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(allow=True)


def session(root: Path, model: Any, *, sandbox: Sandbox, **kw: Any) -> AgentSession:
    config = load_config(root, home=root.parent / "home", env={})
    settings = ProviderSettings(
        name="scripted", protocol="anthropic", model="scripted-1", context_window=200_000,
        models={"haiku": "scripted-haiku"},
    )  # fmt: skip
    return AgentSession(
        root, config=config, provider=model, settings=settings, home=root.parent / "home",
        sandbox=sandbox, approval_handler=_yes, **kw,
    )  # fmt: skip


def explore_runs(commands: list[str]) -> ScriptedModel:
    return ScriptedModel(
        [
            reply(
                tool_call(
                    "Agent", {"description": "look", "prompt": "look", "subagent_type": "Explore"}
                )
            ),
            reply(*[tool_call("bash", {"command": c}) for c in commands]),
            reply("looked"),
            reply("done"),
        ]
    )


@pytest.mark.parametrize(("name", "command"), WRITERS, ids=[n for n, _ in WRITERS])
async def test_explore_without_a_sandbox_cannot_write_by_reading_commands(
    tmp_path: Path, name: str, command: str
) -> None:
    root = project(tmp_path / "proj")
    model = explore_runs([command])
    s = session(root, model, sandbox=Sandbox.off(root), mode="bypassPermissions")
    await collect(s.run("explore"))
    untouched(root)
    [result] = model.requests[2].messages[-1].tool_results
    assert result.is_error and "read-only role" in result.content


@needs_bwrap
@pytest.mark.parametrize(("name", "command"), WRITERS, ids=[n for n, _ in WRITERS])
async def test_explore_in_the_sandbox_cannot_write_by_reading_commands(
    tmp_path: Path, name: str, command: str
) -> None:
    root = project(tmp_path / "proj")
    model = explore_runs([command])
    s = session(root, model, sandbox=Sandbox(root, SandboxSettings()), mode="bypassPermissions")
    await collect(s.run("explore"))
    untouched(root)


@needs_bwrap
@pytest.mark.parametrize(
    "command",
    [
        *[c for _, c in WRITERS],
        "python3 -c \"open('out.txt', 'w').write('x')\"",
        "touch out.txt",
        "cp in.txt out.txt",
        "./evil.sh",
        "mkdir -p sub && touch sub/out.txt",
        f"echo x > {Path.home()}/mewcode-readonly-probe",
    ],
)
async def test_a_read_only_role_command_the_reading_missed_still_cannot_write(
    tmp_path: Path, command: str
) -> None:
    # straight through the bash tool, as if every check of the text had been fooled
    root = project(tmp_path / "proj")
    box = Sandbox(root, SandboxSettings())
    asked: list[str] = []

    class Services:
        sandbox = box

        async def ask_person(self, ctx: RunContext, reason: str) -> bool:
            asked.append(reason)
            return True  # a person who says yes to anything

    ctx = RunContext(
        root=root,
        call=ToolUseBlock(id="c1", name="bash", input={"command": command}),
        services=Services(),  # type: ignore[arg-type]
        read_only=True,
    )
    await bash.call(ctx, {"command": command})
    untouched(root)
    assert not (root / "sub").exists()
    assert not (Path.home() / "mewcode-readonly-probe").exists()
    assert asked == []  # never offered the unsandboxed retry


def test_the_reading_allowlist_still_lets_explore_read(tmp_path: Path) -> None:
    from mewcode_kernel.core.permission.shell.analysis import analyze
    from mewcode_kernel.core.permission.shell.readonly import writes_possibly

    for command in (
        "ls -la",
        "git log --oneline -5",
        "git diff HEAD~1",
        "git grep -n keep",
        "sort -rn in.txt",
        "sort -k2 in.txt | uniq -c",
        "uniq in.txt",
        "xxd in.txt | head",
        "find . -name '*.py'",
        "rg -n keep",
        "wc -l in.txt",
        "cat in.txt | sort | uniq",
        "git status --short",
        "tree -a",
    ):
        assert writes_possibly(analyze(command)) is None, command


# ---- delegation never widens --------------------------------------------------------------


def fork_skill(root: Path, allowed: str | None = None) -> None:
    skill = root / ".mewcode" / "skills" / "writer"
    skill.mkdir(parents=True)
    tools = f"allowed-tools: {allowed}\n" if allowed else ""
    (skill / "SKILL.md").write_text(
        f"---\nname: writer\ndescription: writes things\nmode: fork\n{tools}---\nWrite out.txt.\n"
    )


@pytest.mark.parametrize("allowed", [None, "write_file, edit_file, bash"])
async def test_a_fork_skill_loaded_by_explore_stays_read_only(
    tmp_path: Path, allowed: str | None
) -> None:
    root = project(tmp_path / "proj")
    fork_skill(root, allowed)
    model = ScriptedModel(
        [
            reply(
                tool_call(
                    "Agent", {"description": "look", "prompt": "look", "subagent_type": "Explore"}
                )
            ),
            reply(tool_call("load_skill", {"name": "writer"})),
            # the fork child
            reply(
                tool_call("write_file", {"path": "out.txt", "content": "x"}),
                tool_call("bash", {"command": "touch out.txt"}),
                tool_call("bash", {"command": "./evil.sh"}),
            ),
            reply("fork done"),
            reply("explore done"),
            reply("all done"),
        ]
    )
    s = session(root, model, sandbox=Sandbox.off(root), mode="bypassPermissions")
    await collect(s.run("go"))
    untouched(root)
    fork_request = model.requests[3]
    offered = {t.name for t in model.requests[2].tools}
    assert "write_file" not in offered and "edit_file" not in offered
    results = fork_request.messages[-1].tool_results
    assert all(r.is_error for r in results), [r.content for r in results]


async def test_a_fork_skill_loaded_in_plan_mode_cannot_write(tmp_path: Path) -> None:
    root = project(tmp_path / "proj")
    fork_skill(root)
    model = ScriptedModel(
        [
            reply(tool_call("load_skill", {"name": "writer"})),
            reply(
                tool_call("write_file", {"path": "out.txt", "content": "x"}),
                tool_call("bash", {"command": "touch out.txt"}),
            ),
            reply("fork done"),
            reply("all done"),
        ]
    )
    s = session(root, model, sandbox=Sandbox.off(root), mode="plan")
    await collect(s.run("go"))
    untouched(root)
    offered = {t.name for t in model.requests[1].tools}
    assert not offered & {"write_file", "edit_file", "bash", "run_python"}
    assert all(r.is_error for r in model.requests[2].messages[-1].tool_results)


async def test_a_role_never_gets_a_mode_its_parent_lacks(tmp_path: Path) -> None:
    root = project(tmp_path / "proj")
    agents = root / ".mewcode" / "agents"
    agents.mkdir(parents=True)
    (agents / "yolo.md").write_text(
        "---\nname: yolo\ndescription: does anything\npermissionMode: bypassPermissions\n---\nGo.\n"
    )
    model = ScriptedModel(
        [
            reply(tool_call("Agent", {"description": "x", "prompt": "x", "subagent_type": "yolo"})),
            reply(tool_call("bash", {"command": "touch out.txt"})),
            reply("child done"),
            reply("done"),
        ]
    )
    s = session(root, model, sandbox=Sandbox.off(root), mode="default")
    s.approval_handler = None  # nobody to ask: the headless policy (deny)
    await collect(s.run("go"))
    untouched(root)
    [result] = model.requests[2].messages[-1].tool_results
    assert result.is_error
    assert json.dumps(result.content)
