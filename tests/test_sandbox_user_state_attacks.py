"""Security by attack: the user's MewCode folder (the checkpoint key, the
trust store, config, hooks, memory, instructions) is out of a sandboxed
command's reach, whatever the project root is: the home folder itself, a
folder inside it, a folder above it, a folder inside the MewCode folder;
with ``MEWCODE_HOME`` somewhere else; with an ``allow_write`` entry that
covers it; with the folder reached through a symbolic link. Read, copy,
link, ``find``, ``tar``, ``grep``, ``/proc/self/root``, ``..``: the secrets
never come out. Write, create, rename, remove: nothing on the host changes.
Only ``skills``, ``agents`` and ``hooks`` stay visible, read-only, so the
user's own skill scripts still run.

Every case runs for real under bubblewrap through the ``bash`` tool, as if
the permission checks had been fooled.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.config import SandboxSettings, load_config
from mewcode_kernel.core.sandbox import Sandbox
from mewcode_kernel.testing import ScriptedModel

from ._sandboxed import SUPPORT, needs_bwrap, run_in_sandbox

pytestmark = needs_bwrap

KEY = f"KEY-{uuid.uuid4().hex}"
TRUST = f"TRUST-{uuid.uuid4().hex}"
MEMORY = f"MEMORY-{uuid.uuid4().hex}"
SKILL = "SKILL-SCRIPT-RAN"
STATE_FILES = {
    "checkpoint.key": KEY,
    "trusted-projects.json": '{"projects": {"' + TRUST + '": "x"}}',
    "config.yaml": "sandbox:\n  network: 'off'\n",
    "hooks.yaml": "hooks: []\n",
    "MEWCODE.md": f"instructions {MEMORY}\n",
    "memory/notes.md": f"{MEMORY}\n",
}
SECRETS = (KEY, TRUST, MEMORY)


@dataclass
class Layout:
    """``home``: the user's home; ``state``: their MewCode folder; ``root``:
    the project; ``box``: the session's sandbox."""

    home: Path
    state: Path
    root: Path
    box: Sandbox


def _fill_state(state: Path) -> None:
    for rel, text in STATE_FILES.items():
        (state / rel).parent.mkdir(parents=True, exist_ok=True)
        (state / rel).write_text(text)
    script = state / "skills" / "hello" / "run.sh"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!/bin/sh\necho {SKILL}\n")
    script.chmod(0o755)
    (state / "agents").mkdir()
    (state / "agents" / "helper.md").write_text("an agent\n")


@pytest.fixture
def base() -> Iterator[Path]:
    """Outside the sandbox's private /tmp, so nothing is hidden by accident."""
    made = Path(tempfile.mkdtemp(prefix="mewcode-userstate-", dir="/var/tmp"))
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


LAYOUTS = (
    "root-is-home",
    "root-inside-home",
    "root-above-home",
    "mewcode-home-elsewhere",
    "allow-write-covers-it",
    "state-through-a-symlink",
    "root-inside-the-state",
    "root-is-the-state",
)


@pytest.fixture(params=LAYOUTS)
def layout(request: pytest.FixtureRequest, base: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    kind = request.param
    home = base / "home"
    state = home / ".mewcode"
    root = home
    settings = SandboxSettings()
    monkeypatch.delenv("MEWCODE_HOME", raising=False)
    if kind == "root-inside-home":
        root = home / "proj"
    elif kind == "root-above-home":
        root = base
    elif kind == "mewcode-home-elsewhere":
        state = base / "elsewhere" / "mewcode-state"
        monkeypatch.setenv("MEWCODE_HOME", str(state))
        root = base / "elsewhere"  # the state folder is inside the project
    elif kind == "allow-write-covers-it":
        root = home / "proj"
        settings = SandboxSettings(allow_write=(home,))
    elif kind == "state-through-a-symlink":
        real = home / "dotfiles" / "mewcode"
        real.mkdir(parents=True)
        state.parent.mkdir(parents=True, exist_ok=True)
        (home / ".mewcode").symlink_to(real)
        _fill_state(real)
        root = home / "proj"
    elif kind == "root-inside-the-state":
        root = state / "skills" / "hello"
    elif kind == "root-is-the-state":
        root = state
    if kind != "state-through-a-symlink":
        state.mkdir(parents=True, exist_ok=True)
        _fill_state(state)
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text("notes\n") if os.access(root, os.W_OK) else None
    session_home = None if kind == "mewcode-home-elsewhere" else home
    box = Sandbox(root, settings, support=SUPPORT, home=session_home)
    return Layout(home=home, state=state, root=root, box=box)


def _exists(path: str) -> bool:
    return os.path.lexists(path)


def _host_state(state: Path) -> dict[str, str]:
    real = state.resolve()
    return {
        str(p.relative_to(real)): (p.read_text() if p.is_file() else "dir")
        for p in sorted(real.rglob("*"))
    }


# fmt: off
READS: dict[str, str] = {
    "cat-absolute": "cat {state}/checkpoint.key {state}/trusted-projects.json",
    "cat-via-home-var": "HOME={home}; cat ~/.mewcode/checkpoint.key",
    "symlink-in-project": "ln -s {state}/checkpoint.key k; cat k; ln -s {state} s; cat s/*",
    "proc-self-root": "cat /proc/self/root{state}/checkpoint.key",
    "dotdot": "cat {state}/skills/../checkpoint.key {state}/../.mewcode/checkpoint.key",
    "find-exec-cat": "find {home} {state} -type f -exec cat {{}} + 2>/dev/null",
    "grep-recursive": "grep -r . {home} {state} 2>/dev/null",
    "tar-to-stdout": "tar -cf - {home} {state} 2>/dev/null | strings",
    "cp-r-then-cat": "cp -r {state} leak 2>&1; cat leak/* leak/memory/* 2>&1; "
                     "cp -r {state} /tmp/leak; cat /tmp/leak/*",
    "hard-link": "ln {state}/checkpoint.key hk 2>&1; cat hk",
    "python-walk": "python3 -c \"import os;[print(open(os.path.join(d,f)).read()) "
                   "for d,_,fs in os.walk('{state}') for f in fs]\"",
    "base64": "base64 {state}/checkpoint.key | base64 -d",
    "ls-names": "ls -laR {state}",
    "dd": "dd if={state}/checkpoint.key 2>/dev/null",
    "proc-self-cwd": "cd {state} 2>&1 && cat /proc/self/cwd/checkpoint.key",
}
WRITES: dict[str, str] = {
    "write-config": "echo 'sandbox: {{enabled: false}}' > {state}/config.yaml",
    "append-config": "echo 'sandbox: {{enabled: false}}' >> {state}/config.yaml",
    "forge-trust": "echo '{{}}' > {state}/trusted-projects.json",
    "forge-key": "echo forged > {state}/checkpoint.key",
    "new-hook": "echo 'hooks: [evil]' > {state}/hooks.yaml",
    "plant-skill": "mkdir -p {state}/skills/evil && echo evil > {state}/skills/evil/SKILL.md",
    "edit-skill": "echo evil >> {state}/skills/hello/run.sh",
    "rm-rf": "rm -rf {state}/* {state}/.??* 2>&1",
    "swap-folder": "mv {state} {state}.old; mkdir -p {state}; "
                   "echo 'sandbox: {{enabled: false}}' > {state}/config.yaml",
    "python-rename": "python3 -c \"import os; os.rename('{state}/config.yaml', '{state}/c')\"",
    "via-symlinked-parent": "ln -sfn {state} st; echo x > st/config.yaml",
}
# fmt: on


def _fill(cmd: str, lay: Layout) -> str:
    return cmd.format(state=lay.state, home=lay.home)


async def _run(lay: Layout, cmd: str) -> str:
    return await run_in_sandbox(lay.root, _fill(cmd, lay), sandbox=lay.box)


@pytest.mark.parametrize("route", list(READS))
async def test_the_users_secrets_cannot_be_read(layout: Layout, route: str) -> None:
    out = await _run(layout, READS[route])
    leaked = [s for s in SECRETS if s in out]
    assert leaked == [], out
    for p in layout.root.rglob("*") if os.access(layout.root, os.W_OK) else ():
        if p.is_file() and not p.is_symlink() and layout.state.resolve() not in p.parents:
            assert not any(s in p.read_text(errors="replace") for s in SECRETS), p


@pytest.mark.parametrize("route", list(WRITES))
async def test_the_users_state_cannot_be_changed(layout: Layout, route: str) -> None:
    before = _host_state(layout.state)
    await _run(layout, WRITES[route])
    assert _host_state(layout.state) == before
    assert not _exists(f"{layout.state}.old")


async def test_the_users_skills_still_run_read_only(layout: Layout) -> None:
    out = await _run(
        layout,
        "{state}/skills/hello/run.sh; cat {state}/agents/helper.md; ls {state}",
    )
    assert SKILL in out and "an agent" in out
    assert "checkpoint.key" not in out and "config.yaml" not in out


@pytest.mark.parametrize("where", ["default", "MEWCODE_HOME-deeper"])
async def test_a_missing_state_folder_cannot_be_created_from_the_home_folder(
    base: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """With the notebook in the home folder and no MewCode folder yet, a
    command cannot make one (a config turning the sandbox off, a trust store),
    not even by swapping a folder on the way; the stand-in is gone afterwards."""
    home = base / "home"
    (home / "deep").mkdir(parents=True)
    monkeypatch.delenv("MEWCODE_HOME", raising=False)
    if where == "default":
        state, session_home = home / ".mewcode", home
    else:
        state, session_home = home / "deep" / "x" / "state", None
        monkeypatch.setenv("MEWCODE_HOME", str(state))
    box = Sandbox(home, SandboxSettings(), support=SUPPORT, home=session_home)
    out = await run_in_sandbox(
        home,
        f"mkdir -p {state} && echo 'sandbox: {{enabled: false}}' > {state}/config.yaml; "
        f"python3 -c \"import os; os.makedirs('{state}', exist_ok=True)\" 2>&1 | tail -1; "
        f"mv deep/x deep/y; mv deep deep.old && mkdir -p {state} && echo x > {state}/config.yaml",
        sandbox=box,
    )
    assert not (state / "config.yaml").exists(), out
    if where == "default":
        assert sorted(os.listdir(home)) == ["deep.old"], out  # nothing on the way: moved
    else:
        assert sorted(os.listdir(home)) == ["deep"], out  # on the way: pinned
        assert os.listdir(home / "deep") == [], out


async def test_the_session_hides_its_state_and_says_so(base: Path) -> None:
    home = base / "home"
    (home / ".mewcode").mkdir(parents=True)
    _fill_state(home / ".mewcode")
    session = AgentSession(
        home,
        config=load_config(home, home=home, env={}),
        provider=ScriptedModel([]),
        home=home,
    )
    assert session.sandbox.active
    out = await run_in_sandbox(home, "cat .mewcode/checkpoint.key", sandbox=session.sandbox)
    assert KEY not in out
    shown = await run_command(session, "/sandbox")
    assert str(home / ".mewcode") in shown.markdown
    assert str(home / ".mewcode" / "skills") in shown.markdown
    info = session.sandbox.describe()
    assert str(home / ".mewcode") in info["user_state_hidden"]  # type: ignore[operator]
