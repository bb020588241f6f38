"""Attacks on where checkpoints and sessions are read and written.

A cloned repository can ship ``.mewcode`` or ``.mewcode/sessions`` (or one
session folder) as a symlink to another project's: genuine records, signed
with the user's own key, would then list and revert here, and this
project's conversation would be written there. A record also names the
project it was made in (signed), so even a copied one is not used
elsewhere. And one record nested deep enough to exhaust the parser must
not take ``/rewind`` (or the session listing) down with it.

The other project here lies inside the clone (a checkout within a
checkout), so before these checks a revert of its turn would land.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.checkpoints import TurnCheckpoints, stored_turns, user_key
from mewcode_kernel.core.checkpoints.signing import sign
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.errors import SessionError
from mewcode_kernel.core.messages import user
from mewcode_kernel.core.session import (
    CONVERSATION_FILE,
    META_FILE,
    SessionStore,
    list_sessions,
    load_session,
)
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call

LINKS = [".mewcode", ".mewcode/sessions"]


def make_session(root: Path, home: Path, model: ScriptedModel | None = None) -> AgentSession:
    return AgentSession(
        root,
        config=load_config(root, home=home, env={}),
        provider=model or ScriptedModel(),
        home=home,
        mode="bypassPermissions",
    )


async def edit_turn(root: Path, home: Path) -> str:
    """One turn in ``root`` turning ``notes.txt``'s "two" into "TWO"; its label."""
    model = ScriptedModel()
    session = make_session(root, home, model)
    call = tool_call("edit_file", {"path": "notes.txt", "old_string": "two", "new_string": "TWO"})
    model.add(reply(call), reply("done"))
    await collect(session.run("change things"))
    assert session.checkpoints.record is not None
    label = session.checkpoints.record.label
    await session.aclose()
    return label


def tree(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its bytes (to show nothing changed there)."""
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def link(clone: Path, part: str, target: Path) -> Path:
    """What the clone ships: ``part`` (``.mewcode`` or ``.mewcode/sessions``)
    as a relative symlink to ``target``'s."""
    where = clone / part
    where.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(target / part, where.parent), where)
    return where


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"  # one user, one key, for both projects


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    root = tmp_path / "clone"
    root.mkdir()
    return root


@pytest.fixture
def other(clone: Path) -> Path:
    """The user's own project, with the file its turn changed."""
    root = clone / "vendor" / "lib"
    root.mkdir(parents=True)
    (root / "notes.txt").write_text("one\ntwo\n")
    return root.resolve()  # as records name it


# --- A: another project's records ------------------------------------------------------


@pytest.mark.parametrize("part", LINKS)
async def test_a_linked_sessions_folder_lists_and_reverts_nothing(
    home: Path, clone: Path, other: Path, part: str
) -> None:
    label = await edit_turn(other, home)
    linked = link(clone, part, other)
    before = tree(other)
    session = make_session(clone, home)
    for command in ("/rewind list", "/rewind --force", f"/rewind {label} --force"):
        result = await run_command(session, command)
        assert result.error, command
        assert str(linked) in result.markdown and "symbolic link" in result.markdown
    assert (other / "notes.txt").read_text() == "one\nTWO\n"
    assert tree(other) == before


async def test_a_linked_session_folder_is_not_resumed_or_reverted(
    home: Path, clone: Path, other: Path
) -> None:
    label = await edit_turn(other, home)
    sid = label.partition(":")[0]
    (clone / ".mewcode" / "sessions").mkdir(parents=True)
    os.symlink(other / ".mewcode" / "sessions" / sid, clone / ".mewcode" / "sessions" / sid)
    before = tree(other)
    with pytest.raises(SessionError):
        SessionStore.resume(clone, sid)  # would append this conversation to the other's log
    assert list_sessions(clone) == []
    named = await run_command(make_session(clone, home), f"/rewind {label} --force")
    assert named.error
    assert (other / "notes.txt").read_text() == "one\nTWO\n"
    assert tree(other) == before


async def test_a_record_copied_from_another_project_is_not_used(
    home: Path, clone: Path, other: Path
) -> None:
    """No link at all: the signed project root alone keeps it out."""
    label = await edit_turn(other, home)
    sid = label.partition(":")[0]
    shutil.copytree(
        other / ".mewcode" / "sessions" / sid, clone / ".mewcode" / "sessions" / sid, symlinks=True
    )
    session = make_session(clone, home)
    assert stored_turns(clone, session.checkpoints.key) == []
    assert label not in (await run_command(session, "/rewind list")).markdown
    bare = await run_command(session, "/rewind --force")
    assert bare.error and "No turn with file changes" in bare.markdown
    named = await run_command(session, f"/rewind {label} --force")
    assert named.error and "another project" in named.markdown
    assert str(other) in named.markdown
    assert (other / "notes.txt").read_text() == "one\nTWO\n"


async def test_a_signed_record_without_its_project_is_not_used(home: Path, other: Path) -> None:
    """Records from before the root was signed in are not trusted for any project."""
    label = await edit_turn(other, home)
    sid = label.partition(":")[0]
    record_file = other / ".mewcode" / "sessions" / sid / "checkpoints" / "turn-1.json"
    data = json.loads(record_file.read_text())
    data.pop("root", None)
    data.pop("mac")
    record_file.write_text(json.dumps(sign(data, user_key(home))))
    result = await run_command(make_session(other, home), f"/rewind {label} --force")
    assert result.error and "did not record its project" in result.markdown
    assert (other / "notes.txt").read_text() == "one\nTWO\n"


@pytest.mark.parametrize("part", LINKS)
def test_the_recorder_writes_no_checkpoint_through_a_link(
    home: Path, clone: Path, other: Path, part: str
) -> None:
    SessionStore.create(other, provider=None, model=None).close()
    link(clone, part, other)
    before = tree(other)
    (clone / "a.txt").write_text("mine\n")
    recorder = TurnCheckpoints(clone, key=user_key(home))
    sid = "20990101-000000-000000-abcdef"
    recorder.begin(clone / ".mewcode" / "sessions" / sid, sid)
    with pytest.raises(ValueError, match="symbolic link"):
        recorder.before_write(clone / "a.txt", "a.txt")
    assert tree(other) == before


# --- B: the session log ----------------------------------------------------------------


@pytest.mark.parametrize("part", LINKS)
async def test_a_turn_writes_no_session_log_through_a_link(
    home: Path, clone: Path, other: Path, part: str
) -> None:
    """The turn stops before anything is sent, naming the link; once it is
    gone the same prompt runs and is logged in the clone."""
    SessionStore.create(other, provider=None, model=None).close()
    linked = link(clone, part, other)
    before = tree(other)
    model = ScriptedModel()
    model.add(reply("fine"))
    session = make_session(clone, home, model)
    with pytest.raises(SessionError) as refused:
        await collect(session.run("the secret plan"))
    assert str(linked) in str(refused.value) and "symbolic link" in str(refused.value)
    assert model.requests == []
    assert tree(other) == before
    listed = await run_command(session, "/sessions")
    assert listed.error and str(linked) in listed.markdown

    os.unlink(linked)
    await collect(session.run("the secret plan"))
    assert session.session_dir is not None
    assert session.session_dir.parent == clone / ".mewcode" / "sessions"
    assert b"the secret plan" in (session.session_dir / CONVERSATION_FILE).read_bytes()
    assert tree(other) == before
    await session.aclose()


@pytest.mark.parametrize("part", LINKS)
def test_the_session_store_refuses_a_linked_folder(
    home: Path, clone: Path, other: Path, part: str
) -> None:
    with SessionStore.create(other, provider=None, model=None) as writer:
        writer.append(user("theirs"))
        sid = writer.id
    linked = link(clone, part, other)
    before = tree(other)
    for attempt in (
        lambda: SessionStore.create(clone, provider=None, model=None),
        lambda: SessionStore.resume(clone, sid),
        lambda: SessionStore.fork(clone, sid, provider=None, model=None),
        lambda: load_session(clone, sid),
        lambda: list_sessions(clone),
    ):
        with pytest.raises(SessionError, match="symbolic link") as refused:
            attempt()
        assert str(linked) in str(refused.value)
    assert tree(other) == before


# --- C: records and logs too deep to parse ---------------------------------------------


@pytest.mark.parametrize(("opener", "closer"), [("[", "]"), ('{"a":', "}")])
async def test_a_deeply_nested_record_is_skipped_and_the_others_still_list(
    home: Path, other: Path, opener: str, closer: str
) -> None:
    label = await edit_turn(other, home)
    sid = label.partition(":")[0]
    checkpoints = other / ".mewcode" / "sessions" / sid / "checkpoints"
    (checkpoints / "turn-2.json").write_text(opener * 100_000 + "1" + closer * 100_000)
    session = make_session(other, home)
    assert [r.label for r in stored_turns(other, session.checkpoints.key)] == [label]
    listed = await run_command(session, "/rewind list")
    assert not listed.error and listed.data == [label]
    deep = await run_command(session, f"/rewind {sid}:2")
    assert deep.error and "damaged" in deep.markdown
    await run_command(session, "/rewind")
    assert (other / "notes.txt").read_text() == "one\ntwo\n"


def test_a_deeply_nested_session_line_is_skipped(tmp_path: Path) -> None:
    with SessionStore.create(tmp_path, provider=None, model=None) as writer:
        writer.append(user("hello"))
        directory = writer.path
    log = directory / CONVERSATION_FILE
    log.write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n" + log.read_bytes())
    (directory / META_FILE).unlink()  # the listing then reads the prompt from the log
    [info] = list_sessions(tmp_path)
    assert info.first_prompt == "hello"
    loaded = load_session(tmp_path, info.id)
    assert loaded.skipped_lines == 1 and len(loaded.messages) == 1


# --- D: a real session folder whose files are links ------------------------------------


def shipped_session(clone: Path, victim: Path, *linked: str) -> tuple[str, dict[str, Path]]:
    """A session a cloned repository ships: a real folder, but ``linked`` of
    its files are symlinks to files outside the project (``victim``'s)."""
    with SessionStore.create(clone, provider=None, model=None) as writer:
        writer.append(user("hi"))
        sid, directory = writer.id, writer.path
    victim.mkdir(parents=True, exist_ok=True)
    targets = {}
    for name in linked:
        target = victim / name.lstrip(".")
        if name == ".lock":
            target.write_text("export IMPORTANT=1")  # ~/.bashrc, say
        else:  # another project's log or meta, say
            target.write_bytes((directory / name).read_bytes())
        (directory / name).unlink(missing_ok=True)
        os.symlink(target, directory / name)
        targets[name] = directory / name
    return sid, targets


@pytest.mark.parametrize(
    "linked",
    [(".lock",), (CONVERSATION_FILE,), (META_FILE,), (".lock", CONVERSATION_FILE)],
    ids=["lock", "conversation", "meta", "lock+conversation"],
)
def test_resume_writes_nothing_through_a_linked_session_file(
    tmp_path: Path, clone: Path, linked: tuple[str, ...]
) -> None:
    victim = tmp_path / "victim"
    sid, links = shipped_session(clone, victim, *linked)
    before = tree(victim)
    attempts = (
        lambda: SessionStore.resume(clone, sid)[1].append(user("my secret prompt")),
        lambda: SessionStore.open(clone, sid).append(user("my secret prompt")),
    )
    for attempt in attempts:
        with pytest.raises(SessionError, match="symbolic link") as refused:
            attempt()
        assert any(str(p) in str(refused.value) for p in links.values())
    assert tree(victim) == before  # .lock -> ~/.bashrc is not truncated, no log appended
    assert all(p.is_symlink() for p in links.values())


@pytest.mark.parametrize("name", [CONVERSATION_FILE, META_FILE])
def test_loading_reads_nothing_through_a_linked_session_file(
    tmp_path: Path, clone: Path, name: str
) -> None:
    sid, links = shipped_session(clone, tmp_path / "victim", name)
    with pytest.raises(SessionError, match="symbolic link") as refused:
        load_session(clone, sid)
    assert str(links[name]) in str(refused.value)


def test_the_lock_is_not_taken_through_a_link(tmp_path: Path, clone: Path) -> None:
    from mewcode_kernel.core.session.lock import SessionLock, holder_of

    victim = tmp_path / "victim"
    sid, links = shipped_session(clone, victim, ".lock")
    with pytest.raises(SessionError, match="symbolic link") as refused:
        SessionLock(links[".lock"].parent, sid)
    assert str(links[".lock"]) in str(refused.value)
    assert holder_of(links[".lock"].parent) is None
    assert (victim / "lock").read_text() == "export IMPORTANT=1"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("name", [CONVERSATION_FILE, META_FILE, ".lock"])
def test_a_fifo_in_a_session_folder_is_refused_without_hanging(clone: Path, name: str) -> None:
    with SessionStore.create(clone, provider=None, model=None) as writer:
        writer.append(user("hi"))
        sid, directory = writer.id, writer.path
    (directory / name).unlink(missing_ok=True)
    os.mkfifo(directory / name)
    with pytest.raises(SessionError, match="not a regular file") as refused:
        SessionStore.resume(clone, sid)
    assert str(directory / name) in str(refused.value)
    [info] = list_sessions(clone)
    if name != ".lock":  # listing does not open the lock
        assert info.problem and "not a regular file" in info.problem


def test_a_session_with_a_linked_file_is_flagged_and_the_others_still_list(
    tmp_path: Path, clone: Path
) -> None:
    victim = tmp_path / "victim"
    with SessionStore.create(clone, provider=None, model=None) as writer:
        writer.append(user("my own work"))
        mine = writer.id
    hostile = {}
    for name in (CONVERSATION_FILE, META_FILE):
        sid, links = shipped_session(clone, victim / name, name)
        hostile[sid] = links[name]
    before = tree(victim)
    infos = {i.id: i for i in list_sessions(clone)}
    assert infos[mine].first_prompt == "my own work" and infos[mine].problem is None
    for sid, linked in hostile.items():
        info = infos[sid]
        assert info.problem and str(linked) in info.problem and "symbolic link" in info.problem
        assert info.first_prompt.startswith(f"[cannot be resumed: {linked.name} is a symbolic link")
        assert info.message_count == 0 and not info.meta_ok
    assert tree(victim) == before


async def test_a_bare_resume_passes_over_a_session_with_a_linked_file(
    tmp_path: Path, home: Path, clone: Path
) -> None:
    """The newest session being a shipped one must not stand between the user
    and their own latest session."""
    with SessionStore.create(clone, provider=None, model=None) as writer:
        writer.append(user("my own work"))
        mine = writer.id
    victim = tmp_path / "victim"
    shipped_session(clone, victim, CONVERSATION_FILE)
    before = tree(victim)
    result = await run_command(make_session(clone, home), "/resume")
    assert not result.error, result.markdown
    assert result.data == mine
    assert tree(victim) == before
