"""Checkpoints and revert in the core: a turn's first change to a file saves
it (a created file is recorded as created), ``/rewind`` restores edited files
and deletes created ones, refuses to clobber a file changed since, and
cannot be steered outside the project by a forged record or a swapped-in
symlink; binary, huge and protected files are handled as documented."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.checkpoints import MAX_SNAPSHOT_BYTES, CheckpointStore, stored_turns
from mewcode_kernel.core.checkpoints.signing import sign
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call


def make_session(root: Path, model: ScriptedModel) -> AgentSession:
    return AgentSession(
        root,
        config=load_config(root, home=root / "home", env={}),
        provider=model,
        home=root / "home",
        mode="bypassPermissions",
    )


def write(path: str, content: str) -> object:
    return tool_call("write_file", {"path": path, "content": content})


def edit(path: str, old: str, new: str) -> object:
    return tool_call("edit_file", {"path": path, "old_string": old, "new_string": new})


async def turn(session: AgentSession, model: ScriptedModel, *calls: object) -> None:
    model.add(reply(*calls), reply("done"))
    await collect(session.run("change things", origin={"execution_count": 7}))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("one\ntwo\n")
    return root


async def test_revert_restores_edited_and_deletes_created_files(project: Path) -> None:
    model = ScriptedModel()
    session = make_session(project, model)
    await turn(session, model, edit("notes.txt", "two", "TWO"), write("sub/new.py", "x = 1\n"))
    await turn(session, model, edit("notes.txt", "one", "ONE"))  # a second turn, same file
    assert (project / "notes.txt").read_text() == "ONE\nTWO\n"
    record = session.checkpoints.record
    assert record is not None and record.turn == 2
    [first] = [r for r in stored_turns(project, session.checkpoints.key) if r.turn == 1]
    assert [(e.shown, e.status) for e in first.files] == [
        ("notes.txt", "edited"),
        ("sub/new.py", "created"),
    ]
    assert first.origin == {"execution_count": 7}

    undo_second = await run_command(session, "/rewind")  # the latest turn first
    assert "restored" in undo_second.markdown
    assert (project / "notes.txt").read_text() == "one\nTWO\n"
    undo_first = await run_command(session, "/rewind")
    assert (project / "notes.txt").read_text() == "one\ntwo\n"
    assert not (project / "sub" / "new.py").exists()
    assert "deleted" in undo_first.markdown and "-x = 1" in undo_first.markdown
    nothing = await run_command(session, "/rewind")
    assert nothing.error and "No turn with file changes" in nothing.markdown


async def test_a_file_changed_since_is_not_overwritten_without_force(project: Path) -> None:
    model = ScriptedModel()
    session = make_session(project, model)
    await turn(session, model, edit("notes.txt", "two", "TWO"), write("made.txt", "agent\n"))
    (project / "notes.txt").write_text("one\nTWO\nmine\n")  # the person edits it after the turn
    refused = await run_command(session, "/rewind")
    assert "Nothing reverted" in refused.markdown and "changed since the turn" in refused.markdown
    assert "+two" in refused.markdown and "-mine" in refused.markdown  # the diff is shown
    assert (project / "notes.txt").read_text() == "one\nTWO\nmine\n"
    assert (project / "made.txt").exists()  # all or nothing
    preview = await run_command(session, "/rewind 1 --dry-run --force")
    assert "overwritten (--force)" in preview.markdown
    assert (project / "notes.txt").read_text() == "one\nTWO\nmine\n"
    forced = await run_command(session, "/rewind 1 --force")
    assert "restored" in forced.markdown
    assert (project / "notes.txt").read_text() == "one\ntwo\n"
    assert not (project / "made.txt").exists()


async def test_revert_works_from_a_new_session(project: Path) -> None:
    """A kernel restart starts a new session: ``/rewind`` finds the last turn
    of the project, and ``SESSION:N`` names one of any session."""
    model = ScriptedModel()
    first = make_session(project, model)
    await turn(first, model, write("notes.txt", "replaced\n"))
    label = first.checkpoints.record.label  # type: ignore[union-attr]
    await first.aclose()
    later = make_session(project, ScriptedModel())
    listing = await run_command(later, "/rewind list")
    assert label in listing.markdown
    preview = await run_command(later, f"/rewind {label} --dry-run")
    assert "+one" in preview.markdown and (project / "notes.txt").read_text() == "replaced\n"
    done = await run_command(later, "/rewind")
    assert label in done.markdown and (project / "notes.txt").read_text() == "one\ntwo\n"


async def test_rewind_cell_names_the_turn_a_cell_ran(project: Path) -> None:
    model = ScriptedModel()
    session = make_session(project, model)
    await turn(session, model, write("a.txt", "a"))
    model.add(reply(write("b.txt", "b")), reply("done"))
    await collect(session.run("more", origin={"execution_count": 9}))
    wrong = await run_command(session, "/rewind cell 3")
    assert wrong.error and "In [3]" in wrong.markdown
    await run_command(session, "/rewind cell 7")
    assert not (project / "a.txt").exists() and (project / "b.txt").exists()


async def test_bash_changes_are_listed_as_not_tracked(project: Path) -> None:
    model = ScriptedModel()
    session = make_session(project, model)
    await turn(
        session,
        model,
        tool_call("bash", {"command": "echo hi > by_bash.txt"}),
        write("by_tool.txt", "t"),
    )
    preview = await run_command(session, "/rewind --dry-run")
    assert "echo hi > by_bash.txt" in preview.markdown and "not tracked" in preview.markdown
    await run_command(session, "/rewind")
    assert not (project / "by_tool.txt").exists()
    assert (project / "by_bash.txt").exists()  # not followed: listed, left alone


async def test_binary_content_is_restored_byte_for_byte(project: Path) -> None:
    blob = bytes(range(256)) * 4
    (project / "image.bin").write_bytes(blob)
    model = ScriptedModel()
    session = make_session(project, model)
    await turn(session, model, write("image.bin", "now text"))
    preview = await run_command(session, "/rewind --dry-run")
    assert "binary file image.bin" in preview.markdown
    await run_command(session, "/rewind")
    assert (project / "image.bin").read_bytes() == blob


async def test_a_huge_file_is_not_saved_and_not_reverted(project: Path) -> None:
    big = project / "big.log"
    with big.open("wb") as f:
        f.truncate(MAX_SNAPSHOT_BYTES + 1)
    model = ScriptedModel()
    session = make_session(project, model)
    await turn(session, model, write("big.log", "small now"))
    record = session.checkpoints.record
    assert record is not None and record.files[0].status == "unsaved"
    store = CheckpointStore(session.session_dir, session.checkpoints.key, root=project)  # type: ignore[arg-type]
    assert not store.blobs.exists()
    result = await run_command(session, "/rewind --force")
    assert "was not saved" in result.markdown and big.read_text() == "small now"


# --- attacks on the record and the tree -------------------------------------------------


async def _one_turn(project: Path) -> tuple[AgentSession, Path]:
    model = ScriptedModel()
    session = make_session(project, model)
    await turn(session, model, edit("notes.txt", "two", "TWO"))
    assert session.session_dir is not None
    return session, session.session_dir / "checkpoints" / "turn-1.json"


async def test_a_forged_path_in_the_record_cannot_write_outside(project: Path) -> None:
    """Even a record signed with the user's key (say, edited by another of
    their tools) is re-resolved against the project."""
    session, record_file = await _one_turn(project)
    key = session.checkpoints.key
    outside = project.parent / "outside.txt"
    outside.write_text("TWO")  # same content as what the turn left, to pass the check
    data = json.loads(record_file.read_text())
    data["files"][0]["path"] = str(project / ".." / "outside.txt")
    record_file.write_text(json.dumps(sign(data, key)))
    result = await run_command(session, "/rewind --force")
    assert "not reverted" in result.markdown
    assert outside.read_text() == "TWO"
    data["files"][0]["path"] = str(outside)  # resolved, but outside the project
    record_file.write_text(json.dumps(sign(data, key)))
    result = await run_command(session, "/rewind --force")
    assert "outside the project" in result.markdown and outside.read_text() == "TWO"


def _ship_forged_checkpoint(project: Path, target: str, payload: bytes, key: bytes | None) -> str:
    """What a hostile repository can commit: a session folder with a record
    that 'reverts' ``target`` (as committed) to ``payload``, started in the
    future so it sorts last; signed with the attacker's own key, or not."""
    sid = "29990101-000000-000000-evil00"
    store = project / ".mewcode" / "sessions" / sid / "checkpoints"
    (store / "blobs").mkdir(parents=True)
    blob = hashlib.sha256(payload).hexdigest()
    (store / "blobs" / blob).write_bytes(payload)
    now = hashlib.sha256((project / target).read_bytes()).hexdigest()
    record = {
        "version": 1, "session_id": sid, "turn": 1, "started": "2999-01-01T00:00:00.000+00:00",
        "origin": {}, "commands": [], "reverted": None, "git": "",
        "files": [{"path": str((project / target).resolve()), "shown": "README.md",
                   "status": "edited", "before": blob, "after": now}],
    }  # fmt: skip
    data = sign(record, key) if key is not None else record
    (store / "turn-1.json").write_text(json.dumps(data))
    return sid


@pytest.mark.parametrize("signed_by", ["nobody", "the attacker"])
async def test_a_checkpoint_shipped_in_a_repository_is_never_reverted(
    project: Path, signed_by: str
) -> None:
    """``/rewind`` after a kernel restart looks at every session of the project;
    one the user's key did not sign is not theirs: not listed, not named, not run."""
    attacker_key = os.urandom(32) if signed_by == "the attacker" else None
    sid = _ship_forged_checkpoint(project, "notes.txt", b"import evil\n", attacker_key)
    session = make_session(project, ScriptedModel())
    bare = await run_command(session, "/rewind")
    assert bare.error and "No turn with file changes" in bare.markdown
    named = await run_command(session, f"/rewind {sid}:1 --force")
    assert named.error and "not made by you" in named.markdown
    listed = await run_command(session, "/rewind list")
    assert sid not in listed.markdown
    assert (project / "notes.txt").read_text() == "one\ntwo\n"


async def test_a_signed_record_edited_to_say_more_is_refused(project: Path) -> None:
    """The signature covers every field: a record of the user's own turn,
    edited (here: which file to restore), stops being a checkpoint."""
    session, record_file = await _one_turn(project)
    (project / "other.txt").write_text("one\nTWO\n")
    data = json.loads(record_file.read_text())
    data["files"][0]["path"] = str((project / "other.txt").resolve())
    record_file.write_text(json.dumps(data))
    result = await run_command(session, "/rewind 1 --force")
    assert result.error and "not made by you" in result.markdown
    del data["mac"]
    record_file.write_text(json.dumps(data))
    assert (await run_command(session, "/rewind 1 --force")).error
    assert (project / "other.txt").read_text() == "one\nTWO\n"


def test_the_key_is_the_users_own_and_shared_by_their_kernels(tmp_path: Path) -> None:
    from mewcode_kernel.core.checkpoints import user_key

    home = tmp_path / "home"
    first, again = user_key(home), user_key(home)
    assert first == again and len(first) == 32
    key_file = home / ".mewcode" / "checkpoint.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert user_key(tmp_path / "someone-else") != first


async def test_a_symlink_swapped_in_before_revert_is_refused(project: Path) -> None:
    session, _ = await _one_turn(project)
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("one\nTWO\n")
    (project / "notes.txt").unlink()
    os.symlink(elsewhere / "notes.txt", project / "notes.txt")
    result = await run_command(session, "/rewind --force")
    assert "leads elsewhere" in result.markdown
    assert (elsewhere / "notes.txt").read_text() == "one\nTWO\n"


async def test_a_directory_swapped_for_a_symlink_at_the_write_is_refused(project: Path) -> None:
    """Between the plan and the write: the write path reaches the directory
    without following links (``fs.atomic_write_within``)."""
    from mewcode_kernel.core.checkpoints import apply_revert, find_turn, plan_revert, store_of

    (project / "pkg").mkdir()
    (project / "pkg" / "mod.py").write_text("a\n")
    model = ScriptedModel()
    session = make_session(project, model)
    await turn(session, model, edit("pkg/mod.py", "a", "b"))
    key = session.checkpoints.key
    record = find_turn(project, session.session_id, "", key)
    store, workspace = store_of(project, record, key), session.agent.ctx.workspace
    plan = plan_revert(record, store, workspace)
    assert [i.action for i in plan.items] == ["restore"]
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mod.py").write_text("b\n")
    (project / "pkg").rename(project / "pkg-moved")
    os.symlink(elsewhere, project / "pkg")
    done = apply_revert(plan, store, workspace)
    assert done.items[0].outcome.startswith("not reverted")
    assert (elsewhere / "mod.py").read_text() == "b\n"


async def test_a_damaged_blob_is_not_restored(project: Path) -> None:
    session, record_file = await _one_turn(project)
    before = json.loads(record_file.read_text())["files"][0]["before"]
    (record_file.parent / "blobs" / before).write_text("planted")
    result = await run_command(session, "/rewind --force")
    assert "damaged" in result.markdown
    assert (project / "notes.txt").read_text() == "one\nTWO\n"


async def test_protected_files_are_listed_not_reverted(project: Path) -> None:
    (project / ".envrc").write_text("export A=1\n")
    model = ScriptedModel()
    session = make_session(project, model)

    async def yes(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(allow=True)

    session.approval_handler = yes  # a person approved the protected write
    await turn(session, model, write(".envrc", "export A=2\n"), write("plain.txt", "p"))
    result = await run_command(session, "/rewind")
    assert "protected" in result.markdown
    assert (project / ".envrc").read_text() == "export A=2\n"
    assert not (project / "plain.txt").exists()


# --- commands in a git repository -----------------------------------------------------------


def git_project(root: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (root / "gone.txt").write_text("keep me\n")
    (root / ".gitignore").write_text("home/\n.mewcode/\n")
    git("add", ".")
    git("commit", "-qm", "init")


async def test_in_a_git_repository_what_bash_changed_is_reverted(project: Path) -> None:
    git_project(project)
    model = ScriptedModel()
    session = make_session(project, model)
    command = "echo more >> notes.txt && rm gone.txt && echo new > made_by_bash.txt"
    await turn(session, model, tool_call("bash", {"command": command}), write("w.txt", "w"))
    assert not (project / "gone.txt").exists()
    record = session.checkpoints.record
    assert record is not None and record.git == "tracked"
    assert sorted((e.shown, e.status) for e in record.files) == [
        ("gone.txt", "edited"),
        ("made_by_bash.txt", "created"),
        ("notes.txt", "edited"),
        ("w.txt", "created"),
    ]
    preview = await run_command(session, "/rewind --dry-run")
    assert "followed through git" in preview.markdown and "-more" in preview.markdown
    await run_command(session, "/rewind")
    assert (project / "notes.txt").read_text() == "one\ntwo\n"
    assert (project / "gone.txt").read_text() == "keep me\n"
    assert not (project / "made_by_bash.txt").exists() and not (project / "w.txt").exists()


def test_git_snapshots_run_no_program_the_repository_names(project: Path) -> None:
    """A repository's config can name a clean filter and an fsmonitor hook:
    taking a snapshot runs neither."""
    from mewcode_kernel.core.checkpoints import git

    git_project(project)
    marker = project.parent / "ran"
    (project / ".gitattributes").write_text("* filter=evil\n")
    subprocess.run(["git", "config", "filter.evil.clean", f"touch {marker}; cat"], cwd=project)
    subprocess.run(["git", "config", "core.fsmonitor", f"touch {marker}; true"], cwd=project)
    (project / "gone.txt").write_text("changed\n")
    snap = git.snapshot(project)
    assert not marker.exists()
    (project / "gone.txt").write_text("changed again\n")
    [change] = [c for c in git.changes_between(project, snap, git.snapshot(project), 10**6)]
    assert change.before == b"changed\n" and change.after == b"changed again\n"
    assert not marker.exists()
