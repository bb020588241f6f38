"""Several users on one machine or one shared project, attacked file by file:
another user's session (named exactly, by prefix, through a link, by a
path), a key file others can read or that is a link, a FIFO or another's,
a MewCode folder another user owns or planted something in, and the modes
of what MewCode creates whatever the umask.

"Another user" is a real other owner: files are handed to ``nobody`` with
``chown``, which needs root (as CI has); the JupyterHub test
(tests/test_deploy_hub.py) runs the same rules across two real users.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.core.errors import ConfigError, SessionError, SessionNotYours
from mewcode_kernel.core.key_file import read_key_file, with_key_file
from mewcode_kernel.core.ownership import container_mode, ensure_private_dir
from mewcode_kernel.core.session import SessionStore, list_sessions, load_session
from mewcode_kernel.core.session.lock import SessionLock
from mewcode_kernel.core.userdirs import prepare_home

KEY = "sk-ant-" + "k" * 30
NOBODY = 65534


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _give_away(path: Path) -> None:
    """``path`` and all in it to another user."""
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        os.lchown(p, NOBODY, NOBODY)


@pytest.fixture
def root_only() -> None:
    if os.geteuid() != 0:
        pytest.skip("hands files to another user with chown: needs root (CI runs as root)")


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The widest umask: what MewCode makes private must not rely on the umask."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _session(root: Path, prompt: str = "hello") -> str:
    writer = SessionStore.create(root, provider="p", model="m")
    writer.set_first_prompt(prompt)
    writer.close()
    return writer.id


# --- sessions -----------------------------------------------------------------


@pytest.mark.usefixtures("open_umask")
def test_sessions_are_private_whatever_the_umask(tmp_path: Path) -> None:
    tmp_path.chmod(0o2777)  # a project everyone may write
    sid = _session(tmp_path)
    folder = tmp_path / ".mewcode" / "sessions" / sid
    assert _mode(folder) == 0o700
    for p in folder.rglob("*"):
        assert not _mode(p) & 0o077, (p, oct(_mode(p)))
    for container in (tmp_path / ".mewcode", tmp_path / ".mewcode" / "sessions"):
        assert _mode(container) & stat.S_ISVTX, oct(_mode(container))  # nobody removes others'


@pytest.mark.parametrize(
    ("project", "container"),
    [
        (0o755, 0o700),
        (0o775, 0o1770),
        (0o2770, 0o3770),
        (0o777, 0o1777),
        (0o703, 0o1707),
    ],
)
def test_a_sessions_container_is_shared_as_the_project_is(project: int, container: int) -> None:
    assert container_mode(project) == container


@pytest.mark.usefixtures("root_only")
@pytest.mark.parametrize("how", ["exact", "prefix", "with spaces"])
def test_another_users_session_is_never_read_resumed_or_forked(tmp_path: Path, how: str) -> None:
    theirs = _session(tmp_path, "their secret plan")
    _give_away(tmp_path / ".mewcode" / "sessions" / theirs)
    name = {"exact": theirs, "prefix": theirs[:-2], "with spaces": f"  {theirs} "}[how]
    error = SessionNotYours if how != "prefix" else SessionError
    for attempt in (
        lambda: load_session(tmp_path, name),
        lambda: SessionStore.resume(tmp_path, name),
        lambda: SessionStore.open(tmp_path, name),
        lambda: SessionStore.fork(tmp_path, name, provider="p", model="m"),
    ):
        with pytest.raises(error) as caught:
            attempt()
        assert "their secret plan" not in str(caught.value)
    assert list_sessions(tmp_path) == []


@pytest.mark.usefixtures("root_only")
def test_another_users_session_is_never_locked(tmp_path: Path) -> None:
    theirs = _session(tmp_path)
    folder = tmp_path / ".mewcode" / "sessions" / theirs
    (folder / ".lock").write_text("4242\n")  # their kernel's
    _give_away(folder)
    with pytest.raises(SessionNotYours) as caught:
        SessionLock(folder, theirs)
    assert "belongs to another user (nobody)" in str(caught.value)
    assert (folder / ".lock").read_text() == "4242\n"  # never truncated or taken


@pytest.mark.usefixtures("root_only")
def test_a_link_planted_in_the_shared_folder_is_no_session_of_mine(tmp_path: Path) -> None:
    mine = _session(tmp_path, "mine")
    sessions = tmp_path / ".mewcode" / "sessions"
    # another user links a name to my session (to have me write where they choose)
    planted = sessions / "20991231-000000-aaaa"
    planted.symlink_to(sessions / mine)
    os.lchown(planted, NOBODY, NOBODY)
    with pytest.raises(SessionError):
        SessionStore.resume(tmp_path, planted.name)
    assert [s.id for s in list_sessions(tmp_path)] == [mine]


@pytest.mark.usefixtures("root_only")
def test_a_file_of_another_user_inside_my_session_is_refused(tmp_path: Path) -> None:
    mine = _session(tmp_path)
    conversation = tmp_path / ".mewcode" / "sessions" / mine / "conversation.jsonl"
    conversation.touch()
    os.chown(conversation, NOBODY, NOBODY)
    with pytest.raises(SessionError, match="another user"):
        SessionStore.resume(tmp_path, mine)


@pytest.mark.parametrize("name", ["../sessions", "..", ".", "a/../b", "x\x00y", "/etc"])
def test_session_names_that_are_paths_name_no_session(tmp_path: Path, name: str) -> None:
    _session(tmp_path)
    with pytest.raises(SessionError):
        load_session(tmp_path, name)


@pytest.mark.usefixtures("root_only")
def test_the_listing_shows_only_my_sessions(tmp_path: Path) -> None:
    mine, theirs = _session(tmp_path, "mine"), _session(tmp_path, "theirs")
    _give_away(tmp_path / ".mewcode" / "sessions" / theirs)
    assert [s.id for s in list_sessions(tmp_path)] == [mine]


# --- the key file -------------------------------------------------------------


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".mewcode").mkdir(parents=True, mode=0o700)
    return home


def _keys(home: Path, text: str, mode: int = 0o600) -> Path:
    path = home / ".mewcode" / "keys.env"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_keys_env_fills_only_secret_names_and_the_environment_wins(tmp_path: Path) -> None:
    home = _home(tmp_path)
    _keys(
        home,
        f"# mine\nexport ANTHROPIC_API_KEY='{KEY}'\nOPENAI_API_KEY=\"sk-o\"  \n"
        "PATH=/tmp/evil\nMEWCODE_ROOT=/\nLD_PRELOAD=/tmp/x.so\nHTTPS_PROXY=http://evil\n"
        "MY_TOKEN=t # note\n",
    )
    keys = read_key_file(home, env={})
    assert dict(keys.values) == {
        "ANTHROPIC_API_KEY": KEY,
        "OPENAI_API_KEY": "sk-o",
        "MY_TOKEN": "t",
    }
    assert {"PATH", "MEWCODE_ROOT", "LD_PRELOAD", "HTTPS_PROXY"} <= set(keys.ignored)
    env = with_key_file({"OPENAI_API_KEY": "from-env", "ANTHROPIC_API_KEY": ""}, keys)
    assert env["OPENAI_API_KEY"] == "from-env" and env["ANTHROPIC_API_KEY"] == KEY
    assert "PATH" not in env
    assert "ANTHROPIC_API_KEY" not in os.environ or os.environ["ANTHROPIC_API_KEY"] != KEY


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602, 0o644, 0o666])
def test_keys_env_others_can_reach_is_refused(tmp_path: Path, mode: int) -> None:
    home = _home(tmp_path)
    path = _keys(home, f"ANTHROPIC_API_KEY={KEY}\n", mode)
    with pytest.raises(ConfigError) as caught:
        read_key_file(home, env={})
    assert f"chmod 600 {path}" in str(caught.value) and KEY not in str(caught.value)


def test_keys_env_as_a_link_is_refused_even_to_a_private_file(tmp_path: Path) -> None:
    home = _home(tmp_path)
    target = tmp_path / "elsewhere.env"
    target.write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    target.chmod(0o600)
    (home / ".mewcode" / "keys.env").symlink_to(target)
    with pytest.raises(ConfigError, match="symbolic link"):
        read_key_file(home, env={})


def test_keys_env_as_a_fifo_or_folder_is_refused_without_blocking(tmp_path: Path) -> None:
    home = _home(tmp_path)
    os.mkfifo(home / ".mewcode" / "keys.env", 0o600)
    with pytest.raises(ConfigError, match="not a regular file"):
        read_key_file(home, env={})
    (home / ".mewcode" / "keys.env").unlink()
    (home / ".mewcode" / "keys.env").mkdir(mode=0o700)
    with pytest.raises(ConfigError):
        read_key_file(home, env={})


@pytest.mark.usefixtures("root_only")
def test_keys_env_of_another_user_is_refused(tmp_path: Path) -> None:
    home = _home(tmp_path)
    path = _keys(home, f"ANTHROPIC_API_KEY={KEY}\n")
    os.chown(path, NOBODY, NOBODY)
    with pytest.raises(ConfigError, match="belongs to nobody"):
        read_key_file(home, env={})


def test_a_huge_keys_env_is_refused(tmp_path: Path) -> None:
    home = _home(tmp_path)
    _keys(home, "A_TOKEN=" + "x" * 70_000 + "\n")
    with pytest.raises(ConfigError, match="larger than"):
        read_key_file(home, env={})


# --- the MewCode folder -------------------------------------------------------


@pytest.mark.usefixtures("open_umask")
def test_the_mewcode_folder_is_created_private_and_narrowed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    state = prepare_home(home)
    assert state == home / ".mewcode" and _mode(state) == 0o700
    state.chmod(0o777)
    prepare_home(home)
    assert _mode(state) == 0o700
    # MEWCODE_HOME several folders deep: each folder made for it is private too
    deep = tmp_path / "deep" / "er" / "mewcode"
    chosen = prepare_home(env={"MEWCODE_HOME": str(deep)})
    assert chosen == deep and _mode(deep) == _mode(deep.parent) == 0o700


@pytest.mark.usefixtures("root_only")
def test_a_mewcode_folder_another_user_owns_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "theirs"
    state.mkdir(mode=0o700)
    os.chown(state, NOBODY, NOBODY)
    with pytest.raises(ConfigError, match="belongs to nobody"):
        prepare_home(env={"MEWCODE_HOME": str(state)})
    # nor through a link of mine to it
    link = tmp_path / "mine"
    link.symlink_to(state)
    with pytest.raises(ConfigError, match="belongs to nobody"):
        prepare_home(env={"MEWCODE_HOME": str(link)})


@pytest.mark.usefixtures("root_only")
@pytest.mark.parametrize("planted", ["hooks", "trust.json", "keys.env", "settings.yaml"])
def test_a_mewcode_folder_with_something_another_user_put_in_it_is_refused(
    tmp_path: Path, planted: str
) -> None:
    home = tmp_path / "home"
    (home / ".mewcode").mkdir(parents=True, mode=0o777)  # left open once
    thing = home / ".mewcode" / planted
    thing.mkdir() if "." not in planted else thing.write_text("x")
    os.lchown(thing, NOBODY, NOBODY)
    with pytest.raises(ConfigError, match="was put there by nobody"):
        prepare_home(home)


@pytest.mark.usefixtures("root_only")
def test_a_mewcode_folder_another_user_could_swap_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone may rename what is in it, no sticky bit
    with pytest.raises(ConfigError, match="without the sticky bit"):
        prepare_home(env={"MEWCODE_HOME": str(shared / "mewcode")})
    shared.chmod(0o1777)  # /tmp-like: each keeps their own
    assert prepare_home(env={"MEWCODE_HOME": str(shared / "mewcode")}) == shared / "mewcode"
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, NOBODY, NOBODY)  # a folder on the way that another user owns
    with pytest.raises(ConfigError, match="on the way to it"):
        prepare_home(env={"MEWCODE_HOME": str(theirs / "mewcode")})


@pytest.mark.usefixtures("root_only")
def test_a_private_folder_of_another_user_is_never_taken_over(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir(mode=0o755)
    os.chown(folder, NOBODY, NOBODY)
    with pytest.raises(PermissionError):
        ensure_private_dir(folder)
    assert _mode(folder) == 0o755  # never narrowed (nor changed at all) for its owner
