from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mewcode_kernel.core.conversation import Conversation
from mewcode_kernel.core.errors import SessionError
from mewcode_kernel.core.messages import Message, ToolResultBlock, ToolUseBlock, assistant, user
from mewcode_kernel.core.session import (
    CONVERSATION_FILE,
    META_FILE,
    SessionStore,
    is_session_id,
    list_sessions,
    load_session,
    new_session_id,
    session_id_time,
    sessions_dir,
)
from mewcode_kernel.core.session.ids import claim_session_dir
from mewcode_kernel.core.session.lock import LOCK_FILE


def lines_on_disk(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as f:  # a separate open, as another process would
        return f.read().split("\n")


def call(id_: str, name: str = "read_file") -> ToolUseBlock:
    return ToolUseBlock(id=id_, name=name, input={"path": "a.py"})


def result(id_: str, text: str = "ok") -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=id_, content=text)


# --- create, append, meta ---------------------------------------------------


def test_create_writes_meta_and_an_empty_conversation(tmp_path: Path):
    before = datetime.now(UTC) - timedelta(seconds=1)
    with SessionStore.create(tmp_path, "anthropic", "claude-sonnet-4-5") as writer:
        assert writer.path == sessions_dir(tmp_path) / writer.id
        assert writer.path.parent == tmp_path / ".mewcode" / "sessions"
        assert is_session_id(writer.id)
        assert (writer.path / CONVERSATION_FILE).read_bytes() == b""
        assert (writer.path.stat().st_mode & 0o777) == 0o700
        meta = json.loads((writer.path / META_FILE).read_text())
    assert set(meta) == {
        "version", "id", "provider", "model", "created", "updated", "title", "first_prompt",
        "notebook",
    }  # fmt: skip
    assert (meta["id"], meta["provider"], meta["model"]) == (
        writer.id,
        "anthropic",
        "claude-sonnet-4-5",
    )
    assert meta["version"] == 1 and meta["first_prompt"] is None
    created = datetime.fromisoformat(meta["created"])
    assert created.utcoffset() == timedelta(0)
    assert before <= created <= datetime.now(UTC)
    assert not [p for p in writer.path.iterdir() if p.name.endswith(".tmp")]


def test_each_append_is_on_disk_at_once(tmp_path: Path):
    writer = SessionStore.create(tmp_path, "openai", "gpt-4.1")
    conversation = Conversation(on_append=writer.append, on_replace=writer.replace)
    path = writer.conversation_path
    sent = [
        user("first prompt\nwith two lines"),
        assistant("let me look", call("t1")),
        user(result("t1", "line\u2028separator and \u00e9")),
        assistant("done"),
    ]
    for i, message in enumerate(sent, start=1):
        conversation.append(message)
        on_disk = lines_on_disk(path)
        assert on_disk[-1] == ""  # every line is terminated
        assert len(on_disk) == i + 1
        assert Message.model_validate_json(on_disk[i - 1]) == message
    writer.close()
    assert load_session(tmp_path, writer.id).messages == sent


def test_first_prompt_recorded_once_and_meta_not_rewritten_per_append(tmp_path: Path):
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    meta_path = writer.path / META_FILE
    writer.append(user(result("x")))  # tool results only: not a prompt
    assert json.loads(meta_path.read_text())["first_prompt"] is None
    writer.append(user("  Refactor the auth module  "))
    assert json.loads(meta_path.read_text())["first_prompt"] == "Refactor the auth module"
    stamp = meta_path.stat().st_mtime_ns, meta_path.read_bytes()
    writer.append(assistant("ok"))
    writer.append(user("second prompt"))
    assert (meta_path.stat().st_mtime_ns, meta_path.read_bytes()) == stamp
    assert writer.meta.first_prompt == "Refactor the auth module"


def test_replace_rewrites_atomically_and_appends_continue(tmp_path: Path):
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    for text in ("a", "b", "c"):
        writer.append(user(text))
    writer.replace([user("summary")])
    writer.append(assistant("after"))
    loaded = load_session(tmp_path, writer.id)
    assert [m.text for m in loaded.messages] == ["summary", "after"]
    assert sorted(p.name for p in writer.path.iterdir()) == [
        LOCK_FILE,
        CONVERSATION_FILE,
        META_FILE,
    ]


def test_closed_writer_refuses_appends(tmp_path: Path):
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    writer.close()
    writer.close()  # idempotent
    assert "closed" in repr(writer)
    with pytest.raises(SessionError, match="closed"):
        writer.append(user("x"))


def test_unserialisable_meta_is_a_session_error(tmp_path: Path):
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    with pytest.raises(SessionError):
        writer.append(user("x", meta={"obj": object()}))
    assert writer.conversation_path.read_bytes() == b""


# --- ids --------------------------------------------------------------------


def test_ids_sort_in_creation_order_and_are_unique():
    ids = [new_session_id() for _ in range(5000)]
    assert len(set(ids)) == len(ids)
    assert sorted(ids) == ids
    assert all(is_session_id(i) for i in ids)


def test_id_encodes_its_utc_creation_time():
    when = datetime(2026, 11, 30, 11, 22, 33, 123456, tzinfo=UTC)
    sid = new_session_id(when)
    assert sid.startswith("20261130-112233-123456-")
    assert session_id_time(sid) == when
    assert session_id_time("not-an-id") is None
    assert not is_session_id("../../etc")


def test_concurrent_threads_never_share_a_directory(tmp_path: Path):
    claimed: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [claim_session_dir(tmp_path)[0] for _ in range(100)]
        with lock:
            claimed.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(claimed) == 800 == len(set(claimed))
    assert len(list(tmp_path.iterdir())) == 800


def _claim_many(parent: str) -> list[str]:
    return [claim_session_dir(Path(parent))[0] for _ in range(100)]


def test_concurrent_processes_never_share_a_directory(tmp_path: Path):
    with ProcessPoolExecutor(max_workers=3) as pool:
        batches = list(pool.map(_claim_many, [str(tmp_path)] * 3))
    claimed = [i for batch in batches for i in batch]
    assert len(claimed) == 300 == len(set(claimed))


# --- listing ----------------------------------------------------------------


def _set_mtime(path: Path, when: float) -> None:
    os.utime(path, (when, when))


def test_listing_newest_activity_first_with_first_prompt_and_count(tmp_path: Path):
    old = SessionStore.create(tmp_path, "anthropic", "claude-sonnet-4-5")
    old.append(user("old  session\n prompt"))
    old.append(assistant("a"))
    mid = SessionStore.create(tmp_path, "openai", "gpt-4.1")
    mid.append(user("x" * 200))
    mid.append_marker("compact_marker", {"note": "not counted"})
    new = SessionStore.create(tmp_path, "anthropic", "m")
    now = datetime.now(UTC).timestamp()
    for writer, age in ((old, 0), (mid, 200), (new, 100)):  # old was used most recently
        for name in (CONVERSATION_FILE, META_FILE):
            _set_mtime(writer.path / name, now + 1000 - age)
    infos = list_sessions(tmp_path)
    assert [i.id for i in infos] == [old.id, new.id, mid.id]
    first = infos[0]
    assert first.first_prompt == "old session prompt"
    assert (first.message_count, first.provider, first.model) == (
        2,
        "anthropic",
        "claude-sonnet-4-5",
    )
    assert first.created == session_id_time(old.id)
    assert infos[2].first_prompt == "x" * 79 + "…"
    assert infos[2].message_count == 1
    assert infos[1].first_prompt == "" and infos[1].message_count == 0
    assert all(i.meta_ok for i in infos)


def test_listing_survives_missing_or_corrupt_meta(tmp_path: Path):
    a = SessionStore.create(tmp_path, "anthropic", "m")
    a.append(user(result("r")))
    a.append(user("prompt of a"))
    b = SessionStore.create(tmp_path, "anthropic", "m")
    b.append(user("prompt of b"))
    (a.path / META_FILE).unlink()
    (b.path / META_FILE).write_text("{not json")
    (sessions_dir(tmp_path) / "stray-dir").mkdir()
    infos = {i.id: i for i in list_sessions(tmp_path)}
    assert set(infos) == {a.id, b.id}
    for writer, prompt in ((a, "prompt of a"), (b, "prompt of b")):
        info = infos[writer.id]
        assert not info.meta_ok
        assert info.first_prompt == prompt
        assert info.created == session_id_time(writer.id)
        assert info.provider is None
    assert infos[a.id].message_count == 2


def test_listing_without_sessions_is_empty(tmp_path: Path):
    assert list_sessions(tmp_path) == []


# --- loading ----------------------------------------------------------------


def _raw_session(tmp_path: Path, payload: bytes) -> str:
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    writer.close()
    writer.conversation_path.write_bytes(payload)
    return writer.id


def test_corrupt_lines_are_skipped_and_counted(tmp_path: Path):
    good = [user("hello"), assistant("hi")]
    payload = b"".join(
        [
            good[0].model_dump_json().encode() + b"\n",
            b"this is not json\n",
            b"[1, 2, 3]\n",
            b'{"role": "user", "content": "not a list"}\n',
            b'{"role":"robot","content":[]}\n',
            b"\n",  # blank lines are ignored, not counted
            b'{"type": "some_future_marker", "x": 1}\n',
            good[1].model_dump_json().encode() + b"\n",
            b'{"no_role_no_type": true}\n',
        ]
    )
    loaded = load_session(tmp_path, _raw_session(tmp_path, payload))
    assert loaded.messages == good
    assert loaded.skipped_lines == 5
    assert not loaded.truncated_tail
    [marker] = loaded.markers
    assert (marker.type, marker.position, marker.data["x"]) == ("some_future_marker", 1, 1)


def test_truncated_last_line_is_skipped_and_resume_appends_on_a_new_line(tmp_path: Path):
    whole = user("hello").model_dump_json().encode() + b"\n"
    cut = assistant("a reply that was cut").model_dump_json().encode()[:25]
    sid = _raw_session(tmp_path, whole + cut)
    loaded = load_session(tmp_path, sid)
    assert [m.text for m in loaded.messages] == ["hello"]
    assert (loaded.skipped_lines, loaded.truncated_tail) == (1, True)

    writer = SessionStore.open(tmp_path, sid)
    writer.append(assistant("after the crash"))
    writer.close()
    raw = writer.conversation_path.read_bytes()
    assert (
        raw == whole + cut + b"\n" + assistant("after the crash").model_dump_json().encode() + b"\n"
    )
    again = load_session(tmp_path, sid)
    assert [m.text for m in again.messages] == ["hello", "after the crash"]
    assert (again.skipped_lines, again.truncated_tail) == (1, False)


def test_unterminated_but_whole_last_line_is_kept(tmp_path: Path):
    sid = _raw_session(tmp_path, user("complete").model_dump_json().encode())
    loaded = load_session(tmp_path, sid)
    assert [m.text for m in loaded.messages] == ["complete"]
    assert loaded.skipped_lines == 0


def test_dangling_tool_calls_are_closed_on_load_and_saved_on_resume(tmp_path: Path):
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    writer.append(user("go"))
    writer.append(assistant("two calls", call("t1"), call("t2", "grep")))
    writer.close()
    loaded = load_session(tmp_path, writer.id)
    assert loaded.closed_dangling == 2
    closing = loaded.messages[-1]
    assert closing.role == "user"
    assert [(r.tool_use_id, r.is_error) for r in closing.tool_results] == [
        ("t1", True),
        ("t2", True),
    ]
    assert loaded.unsaved == (closing,)
    assert len(lines_on_disk(writer.conversation_path)) == 3  # load alone writes nothing

    resumed, writer2 = SessionStore.resume(tmp_path, writer.id)
    assert resumed.closed_dangling == 2
    writer2.append(user("continue"))
    writer2.close()
    final = load_session(tmp_path, writer.id)
    assert final.closed_dangling == 0
    assert [m.role for m in final.messages] == ["user", "assistant", "user", "user"]
    assert final.messages[2] == closing


def test_partly_answered_calls_close_only_the_rest(tmp_path: Path):
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    writer.append(user("go"))
    writer.append(assistant(call("t1"), call("t2")))
    writer.append(user(result("t1")))
    writer.close()
    loaded = load_session(tmp_path, writer.id)
    assert loaded.closed_dangling == 1
    assert [r.tool_use_id for r in loaded.messages[-1].tool_results] == ["t2"]


def test_meta_is_loaded_or_guessed(tmp_path: Path):
    writer = SessionStore.create(tmp_path, "openai", "gpt-4.1")
    writer.append(user("p"))
    writer.close()
    loaded = load_session(tmp_path, writer.id)
    assert (loaded.meta.provider, loaded.meta.model, loaded.meta.first_prompt) == (
        "openai",
        "gpt-4.1",
        "p",
    )
    (writer.path / META_FILE).unlink()
    guessed = load_session(tmp_path, writer.id).meta
    assert (guessed.id, guessed.provider, guessed.created) == (
        writer.id,
        None,
        session_id_time(writer.id),
    )
    # reopening rebuilds the meta from the conversation
    SessionStore.open(tmp_path, writer.id).close()
    assert load_session(tmp_path, writer.id).meta.first_prompt == "p"


# --- ids on load ------------------------------------------------------------


def test_unknown_id_lists_close_matches(tmp_path: Path):
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    writer.close()
    typo = writer.id[:-1] + ("0" if writer.id[-1] != "0" else "1")
    with pytest.raises(SessionError) as info:
        load_session(tmp_path, typo)
    assert writer.id in str(info.value)
    with pytest.raises(SessionError, match="no stored sessions"):
        load_session(tmp_path / "elsewhere", "x")


def test_unique_prefix_accepted_ambiguous_refused(tmp_path: Path):
    a = SessionStore.create(tmp_path, "anthropic", "m")
    b = SessionStore.create(tmp_path, "anthropic", "m")
    a.append(user("in a"))
    assert load_session(tmp_path, a.id[:-3]).id == a.id
    assert a.id[:2] == b.id[:2] == "20"
    with pytest.raises(SessionError, match="ambiguous"):
        load_session(tmp_path, "20")
    with pytest.raises(SessionError):
        load_session(tmp_path, "../" + a.id)


def test_listing_counts_messages_from_the_last_compaction(tmp_path: Path) -> None:
    from mewcode_kernel.core.messages import user
    from mewcode_kernel.core.session import SessionStore, list_sessions

    writer = SessionStore.create(tmp_path, provider="p", model="m")
    for i in range(5):
        writer.append(user(f"turn {i}"))
    writer.append_marker("permission", {"tool": "bash", "outcome": "ask"})
    writer.append_marker("compact", {"messages": 2})
    writer.append(user("summary of turns 0-3"))
    writer.append(user("turn 4"))
    writer.append(user("turn 5"))
    writer.close()
    [info] = list_sessions(tmp_path)
    assert info.message_count == 3
