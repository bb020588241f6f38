"""MewCode's own files are never a turn's changes (issue 24, item 4), and turn
numbers come from the session's log, however a cloned repository's log
spells them.

In a trusted git repository that does not ignore ``.mewcode/``, a turn's
command is followed through git; the session's log and the checkpoint being
written are MewCode's, not the turn's, while anything else the command
writes, names that merely look like MewCode's included, is listed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.checkpoints import TurnCheckpoints
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.mcp.launch import log_path
from mewcode_kernel.core.project_paths import MEWCODE_STATE_PATHS
from mewcode_kernel.core.session._files import SESSIONS_DIR
from mewcode_kernel.core.session_log import MAX_TURN, SessionLog
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call


def make_session(root: Path, model: ScriptedModel) -> AgentSession:
    return AgentSession(
        root,
        config=load_config(root, home=root.parent / "home", env={}),
        provider=model,
        home=root.parent / "home",
        mode="bypassPermissions",
    )


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "notes.txt").write_text("one\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")  # no .gitignore: .mewcode/ is not ignored
    return root


async def bash_turn(session: AgentSession, model: ScriptedModel, command: str) -> list[str]:
    model.add(reply(tool_call("bash", {"command": command})), reply("done"))
    await collect(session.run("run it"))
    record = session.checkpoints.record
    assert record is not None and record.git == "tracked", record
    return sorted(e.shown for e in record.files)


def test_the_state_list_names_where_mewcode_writes() -> None:
    assert str(SESSIONS_DIR) in MEWCODE_STATE_PATHS
    logs = log_path(Path("/p"), "x").parent.relative_to("/p")
    assert str(logs) in MEWCODE_STATE_PATHS


async def test_a_turn_changes_only_what_its_command_wrote(project: Path) -> None:
    model = ScriptedModel()
    session = make_session(project, model)
    assert await bash_turn(session, model, "echo made > out.txt") == ["out.txt"]
    # the second turn: its checkpoint, the log appended, turn 1's checkpoint beside it
    assert await bash_turn(session, model, "echo again >> notes.txt; echo x > two.txt") == [
        "notes.txt",
        "two.txt",
    ]
    rewound = await run_command(session, "/rewind")
    assert "protected" not in rewound.markdown, rewound.markdown
    assert (project / "notes.txt").read_text() == "one\n" and not (project / "two.txt").exists()


def test_look_alike_names_are_the_turns_changes(project: Path, tmp_path: Path) -> None:
    """Written between the turn's two git snapshots, as an unsandboxed command
    could (the gate and the sandbox keep a sandboxed one out of ``.mewcode``)."""
    recorder = TurnCheckpoints(project, key=b"k" * 32, git_allowed=lambda: True)
    session_dir = project / ".mewcode" / "sessions" / "s1"
    session_dir.mkdir(parents=True)
    recorder.begin(session_dir, "s1", after=0)
    recorder.note_command("write things")
    own = [".mewcode/sessions/s1/conversation.jsonl", ".mewcode/sessions/s2/x", ".mewcode/logs/a"]
    looks = [
        ".mewcode/sessionsX/a",
        ".mewcode/Sessions/b",
        ".mewcode/sessions.txt",
        ".mewcode/logs2/d",
        "sub/.mewcode/sessions/e",
        ".mewcode/notes.md",
        ".mewcode/settings.local.yaml",
        "x/../.mewcode/sessions-evil",
    ]
    for rel in own + looks:
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("written\n")
    recorder.finish()
    record = recorder.record
    assert record is not None
    shown = sorted(e.shown for e in record.files)
    assert not [s for s in shown if s.startswith((".mewcode/sessions/", ".mewcode/logs/"))]
    expected = sorted(os.path.normpath(r) for r in looks)
    assert shown == expected


async def collect_first_turn(session: AgentSession, model: ScriptedModel) -> None:
    model.add(reply("hello"))
    await collect(session.run("hi"))


# --- turn numbers from the log -------------------------------------------------------


def marker_line(value: object) -> str:
    return json.dumps({"type": "turn", "turn": value}) + "\n"


@pytest.mark.parametrize(
    ("values", "last"),
    [
        ([1, 2, 3], 3),
        ([3, 1], 3),  # the highest, whatever the order
        ([True, 2], 2),  # a boolean is not a number
        (["7", 2], 2),
        ([2.5, 2], 2),
        ([-4, 1], 1),
        ([0], 0),
        ([MAX_TURN, 5], 5),  # past the last a checkpoint file can be named
        ([10**30, 5], 5),
        ([None, {"n": 9}, [9], 4], 4),
    ],
)
async def test_a_stored_sessions_turn_markers_are_read_strictly(
    project: Path, values: list[object], last: int
) -> None:
    model = ScriptedModel()
    session = make_session(project, model)
    await collect_first_turn(session, model)
    sid = session.session_id
    assert sid is not None
    log = session.session_dir / "conversation.jsonl"  # type: ignore[operator]
    await session.aclose()
    with log.open("a") as f:
        for value in values:
            f.write(marker_line(value))
    again = make_session(project, ScriptedModel())
    loaded = await again.resume(sid)
    assert SessionLog.turns_in(loaded) == max(last, 1)  # its own first turn wrote 1


async def test_a_forged_low_marker_never_writes_over_a_checkpoint(project: Path) -> None:
    model = ScriptedModel()
    session = make_session(project, model)
    for _ in range(3):
        await bash_turn(session, model, "echo x >> out.txt")
    sid = session.session_id
    assert sid is not None
    log = session.session_dir / "conversation.jsonl"  # type: ignore[operator]
    await session.aclose()
    text = log.read_text().replace('"turn":3', '"turn":1').replace('"turn":2', '"turn":1')
    log.write_text(text + marker_line(1))
    again = make_session(project, ScriptedModel())
    model = again.provider  # type: ignore[assignment]
    await again.resume(sid)
    await bash_turn(again, model, "echo y >> out.txt")
    assert again.checkpoints.turn == 4  # after the checkpoints on disk, not the forged marker
    listing = await run_command(again, "/rewind list")
    for n in (1, 2, 3, 4):
        assert f"{sid}:{n}" in listing.markdown, listing.markdown
