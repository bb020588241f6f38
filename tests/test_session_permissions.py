"""The permission engine as a user meets it through ``AgentSession``: config
rules, plan mode, headless runs, always-allow saved to the local settings, and
the audit trail in the session log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.events import Notice, PermissionDecided, TurnDone
from mewcode_kernel.core.permission import MODES, ApprovalAnswer, ApprovalRequest
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call

# the rules these tests write are the user's own: the project is trusted
pytestmark = pytest.mark.usefixtures("trusted_projects")


def session(root: Path, model: ScriptedModel, **kw) -> AgentSession:
    config = load_config(root, home=root / "home", env={})
    return AgentSession(root, config=config, provider=model, home=root / "home", **kw)


def markers(root: Path, kind: str) -> list[dict]:
    [conv] = (root / ".mewcode" / "sessions").glob("*/conversation.jsonl")
    lines = [json.loads(x) for x in conv.read_text().splitlines() if x.strip()]
    return [x for x in lines if x.get("type") == kind]


async def test_plan_mode_offers_only_read_only_tools(tmp_path: Path) -> None:
    model = ScriptedModel(
        [reply(tool_call("write_file", {"path": "a.txt", "content": "x"})), reply("ok")]
    )
    s = session(tmp_path, model, mode="plan")
    await collect(s.run("plan it"))
    offered = [t.name for t in model.requests[0].tools]
    assert offered == ["read_file", "glob", "grep"]  # no skill, no task: nothing else usable
    assert not (tmp_path / "a.txt").exists()
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "plan" in result.content.lower()


@pytest.mark.parametrize("mode", MODES)
async def test_write_outside_root_is_refused_in_every_mode(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    target = tmp_path / "outside.txt"
    model = ScriptedModel(
        [
            reply(tool_call("write_file", {"path": "../outside.txt", "content": "pwned"})),
            reply("ok"),
        ]
    )
    s = session(root, model, mode=mode)
    await collect(s.run("escape"))
    assert not target.exists()
    assert model.requests[1].messages[-1].tool_results[0].is_error


async def test_write_outside_root_refused_even_with_headless_allow(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("MEWCODE_HEADLESS_APPROVAL", "allow")
    root = tmp_path / "proj"
    root.mkdir()
    model = ScriptedModel(
        [
            reply(tool_call("write_file", {"path": str(tmp_path / "out.txt"), "content": "x"})),
            reply(tool_call("write_file", {"path": "in.txt", "content": "y"})),
            reply("ok"),
        ]
    )
    s = session(root, model, mode="bypassPermissions")
    await collect(s.run("go"))
    assert not (tmp_path / "out.txt").exists()
    assert (root / "in.txt").read_text() == "y"


async def test_unapproved_bash_does_not_run_headless_and_model_learns_why(tmp_path: Path) -> None:
    model = ScriptedModel([reply(tool_call("bash", {"command": "touch ran.txt"})), reply("ok")])
    s = session(tmp_path, model)
    await collect(s.run("run it"))
    assert not (tmp_path / "ran.txt").exists()
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error
    assert "MEWCODE_HEADLESS_APPROVAL=deny" in result.content
    # The decision and how it was resolved are in the session log.
    [perm] = markers(tmp_path, "permission")
    assert perm["tool"] == "bash" and perm["outcome"] == "ask"
    [approval] = markers(tmp_path, "approval")
    assert (approval["tool"], approval["allowed"], approval["by"]) == ("bash", False, "headless")
    assert approval["call_id"] == model.requests[1].messages[-1].tool_results[0].tool_use_id


async def test_config_rules_allow_and_deny_with_sources(tmp_path: Path) -> None:
    (tmp_path / ".mewcode.yaml").write_text(
        "permissions:\n  allow:\n    - Bash(echo:*)\n  deny:\n    - Read(./secrets/**)\n    - Bash(bogus(\n"
    )
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("hunter2")
    model = ScriptedModel(
        [
            reply(
                tool_call("bash", {"command": "echo hi"}),
                tool_call("read_file", {"path": "secrets/key.txt"}),
            ),
            reply("ok"),
        ]
    )
    s = session(tmp_path, model)
    events = await collect(s.run("go"))
    results = model.requests[1].messages[-1].tool_results
    # the deny rule that does not parse fails closed: its family (Bash) asks,
    # and nobody can approve in this headless run
    assert results[0].is_error and "Bash(bogus(" in results[0].content
    assert ".mewcode.yaml" in results[0].content
    assert results[1].is_error and "hunter2" not in results[1].content
    decided = {e.call.name: e for e in events if isinstance(e, PermissionDecided)}
    assert ".mewcode.yaml" in decided["read_file"].decided_by
    warnings = [e.message for e in events if isinstance(e, Notice) and e.level == "warning"]
    assert any("bogus(" in w and ".mewcode.yaml" in w for w in warnings)
    listed = [(r.behavior, r.text, r.source.label) for r in s.gate.list_rules()]
    assert ("deny", "Read(./secrets/**)", str(tmp_path / ".mewcode.yaml")) in listed


async def test_always_allow_saved_to_local_settings(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply(tool_call("bash", {"command": "echo one"})),
            reply(tool_call("bash", {"command": "echo one"})),
            reply("ok"),
        ]
    )
    asked = 0

    async def save_always(req: ApprovalRequest) -> ApprovalAnswer:
        nonlocal asked
        asked += 1
        return ApprovalAnswer(allow=True, always=True, save=True)

    s = session(tmp_path, model, approval_handler=save_always)
    done = (await collect(s.run("go")))[-1]
    assert isinstance(done, TurnDone) and done.reason == "end_turn"
    assert asked == 1
    saved = (tmp_path / ".mewcode" / "settings.local.yaml").read_text()
    assert "Bash(echo one)" in saved
    # A new session in the same project picks the saved rule up.
    model2 = ScriptedModel([reply(tool_call("bash", {"command": "echo one"})), reply("ok")])
    s2 = session(tmp_path, model2)
    await collect(s2.run("again"))
    assert "one" in model2.requests[1].messages[-1].tool_results[0].content


async def test_mode_switch_during_session(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply(tool_call("write_file", {"path": "a.txt", "content": "1"})),
            reply("denied"),
            reply(tool_call("write_file", {"path": "a.txt", "content": "2"})),
            reply("written"),
        ]
    )
    s = session(tmp_path, model)
    await collect(s.run("write"))
    assert not (tmp_path / "a.txt").exists()
    s.mode = "acceptEdits"
    await collect(s.run("write again"))
    assert (tmp_path / "a.txt").read_text() == "2"
    with pytest.raises(ValueError):
        s.mode = "yolo"


async def test_permissions_command_lists_rules_with_their_files(tmp_path: Path) -> None:
    from mewcode_kernel.core.commands import run_command

    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./secrets/**)"], "allow": ["Bash(ls)"]}})
    )
    s = session(tmp_path, ScriptedModel([]))
    result = await run_command(s, "/permissions")
    lines = result.markdown.splitlines()
    assert lines[0] == "Permission mode: **default**."
    assert "| rule | effect | from |" in lines
    settings = tmp_path / ".claude" / "settings.json"
    assert f"| `Read(./secrets/**)` | deny | {settings} ({settings}) |" in lines
    assert f"| `Bash(ls)` | allow | {settings} ({settings}) |" in lines
    assert result.data == ["Read(./secrets/**)", "Bash(ls)"]


async def test_dont_ask_never_turns_an_ask_into_an_allow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under /mode dontAsk with MEWCODE_HEADLESS_APPROVAL=allow, what would ask
    is denied: nothing is written, nothing runs, and the model is told why."""
    from mewcode_kernel.core.commands import run_command

    monkeypatch.setenv("MEWCODE_HEADLESS_APPROVAL", "allow")
    model = ScriptedModel(
        [
            reply(
                tool_call("write_file", {"path": "a.txt", "content": "x"}),
                tool_call("bash", {"command": "touch ran.txt"}),
            ),
            reply("ok"),
        ]
    )
    s = session(tmp_path, model)
    assert (await run_command(s, "/mode dontAsk")).data == "dontAsk"
    events = await collect(s.run("go"))
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "ran.txt").exists()
    results = model.requests[1].messages[-1].tool_results
    assert all(r.is_error and "dontAsk mode never asks" in r.content for r in results)
    decided = [e for e in events if isinstance(e, PermissionDecided)]
    assert [d.outcome for d in decided] == ["deny", "deny"]
