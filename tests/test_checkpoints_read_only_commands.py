"""A turn that only ran commands that read (``ls``, ``wc -l``) has nothing to
revert and says nothing about untracked changes; a command that may write,
however it is spelled (a redirection, a pipe into ``tee``, a second command
after ``;`` or ``&&``, a substitution, a writing option of a reading
program), is still listed as not tracked. Real sessions running real bash
in the project; the classification is the read-only roles' strict one."""

from __future__ import annotations

from pathlib import Path

import pytest

from mewcode_kernel.core.commands import run_command
from mewcode_kernel.testing import ScriptedModel, tool_call
from tests.test_checkpoints import make_session, turn

READS = [
    "ls",
    "wc -l notes.txt",
    "cat notes.txt | grep one",
    "head -n 1 notes.txt && tail -n 1 notes.txt",
    "git status",
    "ls -la; pwd",
]
MAY_WRITE = [
    "ls > listing.txt",
    "wc -l notes.txt >> counts.txt",
    "cat notes.txt | tee copy.txt",
    "ls; touch made.txt",
    "wc -l notes.txt && rm -f nothing.txt",
    "echo $(touch sub.txt)",
    "sort -o sorted.txt notes.txt",
    "sort --outp=sorted2.txt notes.txt",
    "find . -name nothing -delete",
    "git -c core.pager=cat log",
    "env X=1 touch env.txt",
    "bash -c 'ls'",
    "python3 -c 'print(1)'",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("one\ntwo\n")
    return root


async def _commands_noted(project: Path, command: str) -> list[str]:
    model = ScriptedModel()
    session = make_session(project, model)
    try:
        await turn(session, model, tool_call("bash", {"command": command}))
        record = session.checkpoints.record if session.checkpoints is not None else None
        return list(record.commands) if record is not None else []
    finally:
        await session.aclose()


@pytest.mark.parametrize("command", READS)
async def test_a_command_that_only_reads_leaves_no_note(project: Path, command: str) -> None:
    assert await _commands_noted(project, command) == []


@pytest.mark.parametrize("command", MAY_WRITE)
async def test_a_command_that_may_write_is_listed_as_not_tracked(
    project: Path, command: str
) -> None:
    noted = await _commands_noted(project, command)
    assert len(noted) == 1 and command[:40] in noted[0], noted


async def test_rewind_shows_no_not_tracked_note_for_reads_only(project: Path) -> None:
    model = ScriptedModel()
    session = make_session(project, model)
    try:
        await turn(
            session,
            model,
            tool_call("bash", {"command": "ls"}),
            tool_call("bash", {"command": "wc -l notes.txt"}),
            tool_call("write_file", {"path": "new.txt", "content": "x"}),
        )
        preview = await run_command(session, "/rewind --dry-run")
    finally:
        await session.aclose()
    assert "new.txt" in preview.markdown
    assert "not tracked" not in preview.markdown and "wc -l" not in preview.markdown
