"""``keys.env`` in a real session: the key in the user's MewCode folder
reaches the provider over the real SDK, and nowhere else: not the commands'
environment, not what the model reads back (a project file holding the same
value is redacted by value), not the session log; the environment wins over
the file, and a file others can read stops the session with the fix."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from mewcode_kernel.core import open_session
from mewcode_kernel.core.errors import ConfigError
from mewcode_kernel.core.events import ToolFinished
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply

pytestmark = pytest.mark.usefixtures("trusted_projects")
SECRET = "sk-keyfile-" + "s" * 28


async def allow(req: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(allow=True)


def _project(tmp_path: Path, server: ScriptedServer) -> Path:
    (tmp_path / ".mewcode.yaml").write_text(
        "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
        f"    model: test-model\n    base_url: {server.base_url}\n    api_key: ${{LOCAL_API_KEY}}\n"
    )
    keys = tmp_path / "home" / ".mewcode" / "keys.env"
    keys.parent.mkdir(parents=True, mode=0o700)
    keys.write_text(f"LOCAL_API_KEY={SECRET}\n")
    keys.chmod(0o600)
    return keys


async def test_the_key_files_key_reaches_the_provider_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "leaked.env").write_text(f"KEY={SECRET}\n")  # a user's mistake in the project
    script = [
        reply(tool_calls=[("bash", {"command": "env; echo done"})]),
        reply(tool_calls=[("read_file", {"path": "leaked.env"})]),
        reply(text="Checked."),
    ]
    with ScriptedServer(script) as server:
        _project(tmp_path, server)
        session = open_session(tmp_path, approval_handler=allow, home=tmp_path / "home", env={})
        events = await collect(session.run("Look around."))
        await session.aclose()
        server.assert_all_used()
    results = {e.call.name: e.result.content for e in events if isinstance(e, ToolFinished)}
    assert "done" in results["bash"] and SECRET not in results["bash"]
    assert "LOCAL_API_KEY" not in results["bash"]
    assert SECRET not in results["read_file"]
    headers = {k.lower(): v for k, v in server.received[0].headers.items()}
    assert SECRET in headers.get("x-api-key", "") + headers.get("authorization", "")
    assert all(SECRET not in json.dumps(body) for body in server.requests)
    [log] = (tmp_path / ".mewcode" / "sessions").glob("*/conversation.jsonl")
    assert SECRET not in log.read_text()


async def test_the_environment_wins_over_the_key_file(tmp_path: Path) -> None:
    with ScriptedServer([reply(text="ok")]) as server:
        _project(tmp_path, server)
        session = open_session(
            tmp_path, home=tmp_path / "home", env={"LOCAL_API_KEY": "sk-from-env-0123456789"}
        )
        await collect(session.run("hi"))
        await session.aclose()
    headers = {k.lower(): v for k, v in server.received[0].headers.items()}
    sent = headers.get("x-api-key", "") + headers.get("authorization", "")
    assert "sk-from-env-0123456789" in sent and SECRET not in sent


@pytest.mark.parametrize("mode", [0o640, 0o604])
def test_a_key_file_others_can_read_stops_the_session_with_the_fix(
    tmp_path: Path, mode: int
) -> None:
    with ScriptedServer([]) as server:
        keys = _project(tmp_path, server)
        keys.chmod(mode)
        with pytest.raises(ConfigError) as caught:
            open_session(tmp_path, home=tmp_path / "home", env={})
    assert f"chmod 600 {keys}" in str(caught.value) and SECRET not in str(caught.value)


def _shared_project(tmp_path: Path, server: ScriptedServer) -> Path:
    """A project everyone may write (the MewCode folder stays outside it)."""
    project = tmp_path / "project"
    project.mkdir()
    project.chmod(0o2777)
    (project / "a.txt").write_text("old\n")
    _project(tmp_path, server)
    (tmp_path / ".mewcode.yaml").rename(project / ".mewcode.yaml")
    return project


def _modes(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): stat.S_IMODE(p.lstat().st_mode)
        for p in [folder, *folder.rglob("*")]
    }


async def test_a_real_sessions_files_are_private_under_an_open_umask(tmp_path: Path) -> None:
    """Session log, checkpoints and offloaded output of a real turn in a project
    everyone may write, with umask 0: none readable or writable by others."""
    script = [
        reply(tool_calls=[("write_file", {"path": "a.txt", "content": "new\n"})]),
        reply(tool_calls=[("bash", {"command": "seq 1 200000"})]),
        reply(text="done"),
    ]
    with ScriptedServer(script) as server:
        project = _shared_project(tmp_path, server)
        old = os.umask(0)
        try:
            session = open_session(project, approval_handler=allow, home=tmp_path / "home", env={})
            await collect(session.run("Edit and count."))
            await session.aclose()
        finally:
            os.umask(old)
        server.assert_all_used()
    [folder] = (project / ".mewcode" / "sessions").iterdir()
    found = _modes(folder)
    assert len(found) > 4, found  # log, meta, checkpoints, offloaded output
    assert found["."] == 0o700
    assert {k: oct(m) for k, m in found.items() if m & 0o077} == {}
    home = _modes(tmp_path / "home" / ".mewcode")
    assert all(not mode & 0o077 for mode in home.values()), home
