"""Public Claude Code hooks in the sandbox (issue 24, item 2), with real
bubblewrap, a real ``uv`` from PyPI and real shells.

* ``uv run`` hooks work out of the box: each hook scope has a cache folder
  of its own, writable and kept; never the user's real caches, never
  another scope's, never visible to the model's commands.
* An exit 2 the sandbox caused (a read-only folder, a hidden script, the
  network off) is a failure naming the setting, never a block; a hook that
  read its event and exits 2 still blocks, whatever it printed, and one
  that blocks on purpose without reading it still blocks unless what it
  printed is an error the sandbox causes.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import uv

from mewcode_kernel.core.config import SandboxSettings
from mewcode_kernel.core.hooks import HookEngine
from mewcode_kernel.core.lifecycle import HookOutcome
from mewcode_kernel.core.sandbox import Sandbox, cache_owner
from mewcode_kernel.core.sandbox.caches import CACHE_DIR, tool_cache
from tests._sandboxed import needs_bwrap

pytestmark = needs_bwrap

UV = uv.find_uv_bin()
PROMPT_HOOK = """\
#!/usr/bin/env -S uv run --script
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
import json, os, sys

event = json.loads(sys.stdin.read())
print(f"context from uv: {event['prompt'][:20]} cache={os.environ.get('XDG_CACHE_HOME')}")
"""


@pytest.fixture
def place() -> Iterator[Path]:
    """Project and home outside /tmp (the sandbox gives /tmp a private copy)."""
    base = Path(tempfile.mkdtemp(prefix="mewcode-hooks-", dir="/var/tmp"))
    (base / "project").mkdir()
    (base / "home").mkdir()
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(autouse=True)
def trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEWCODE_TRUST_PROJECT", "1")


def claude_hooks(root: Path, event: str, *commands: str) -> None:
    hooks = [{"type": "command", "command": c} for c in commands]
    settings = {"hooks": {event: [{"hooks": hooks}]}}
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "settings.json").write_text(json.dumps(settings))


def user_hooks(home: Path, event: str, *commands: str) -> None:
    (home / ".mewcode").mkdir(exist_ok=True)
    rules = "".join(
        f"  - name: mine{i}\n    event: {event}\n"
        f"    action: {{type: shell, command: {json.dumps(c)}}}\n"
        for i, c in enumerate(commands)
    )
    (home / ".mewcode" / "hooks.yaml").write_text("hooks:\n" + rules)


def engine(base: Path, **settings: object) -> tuple[HookEngine, Sandbox]:
    root, home = base / "project", base / "home"
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    box = Sandbox(root, SandboxSettings(**settings), env=env, home=home)  # type: ignore[arg-type]
    assert box.active, box.status
    hooks = HookEngine(root, home=home, sandbox=lambda: box)
    return hooks, box


async def prompt(hooks: HookEngine, text: str = "please refactor the parser") -> HookOutcome:
    return await hooks.dispatch("UserPromptSubmit", {"session_id": "s1", "prompt": text})


def real_caches(home: Path) -> list[Path]:
    return [p for p in (home / ".cache", home / ".npm") if p.exists()]


# --- uv run hooks work -----------------------------------------------------------------


async def test_a_public_uv_run_hook_works_in_the_sandbox(place: Path) -> None:
    root, home = place / "project", place / "home"
    (root / ".claude" / "hooks").mkdir(parents=True)
    (root / ".claude" / "hooks" / "user_prompt_submit.py").write_text(PROMPT_HOOK)
    claude_hooks(root, "UserPromptSubmit", f"{UV} run .claude/hooks/user_prompt_submit.py")
    hooks, _ = engine(place)
    outcome = await prompt(hooks)
    assert not outcome.blocked, outcome
    assert not outcome.warnings, outcome.warnings
    [context] = outcome.context
    assert context.startswith("context from uv: please refactor the")
    cache = context.split("cache=")[1]
    owner = cache_owner("hooks", "project", root=root)
    assert cache == str((home / ".mewcode" / CACHE_DIR / owner).resolve())
    assert (Path(cache) / "uv").is_dir()  # uv made its cache there, and keeps it
    assert real_caches(home) == []  # the user's own caches are untouched
    again = await prompt(hooks)  # the second run reuses it
    assert not again.blocked and again.context


async def test_the_users_own_uv_hook_has_its_own_cache(place: Path) -> None:
    root, home = place / "project", place / "home"
    script = home / ".mewcode" / "hooks" / "note.py"  # the user's hooks folder is shown
    script.parent.mkdir(parents=True)
    script.write_text(PROMPT_HOOK)
    user_hooks(home, "UserPromptSubmit", f"{UV} run {script}")
    hooks, _ = engine(place)
    outcome = await prompt(hooks)
    assert not outcome.blocked and not outcome.warnings, outcome
    cache = outcome.context[0].split("cache=")[1]
    assert Path(cache).name == cache_owner("hooks", "user", root=root) == "hooks-user"
    assert real_caches(home) == []


# --- what the caches may and may not reach -----------------------------------------------


async def test_each_scope_sees_only_its_own_cache(place: Path, tmp_path: Path) -> None:
    root, home = place / "project", place / "home"
    plant = "sh -c 'cat >/dev/null; echo planted > \"$XDG_CACHE_HOME/poison\"; echo ok'"
    claude_hooks(root, "UserPromptSubmit", plant)
    look = (
        'cat >/dev/null; ls -a "$XDG_CACHE_HOME"; '
        f"ls -a {home}/.mewcode/{CACHE_DIR} 2>&1; "
        f"touch {home}/.cache-try 2>&1; mkdir -p {home}/.cache/uv 2>&1; true"
    )
    user_hooks(home, "UserPromptSubmit", look)
    hooks, box = engine(place)
    await prompt(hooks)  # the user's rule runs first, then the project's plants
    outcome = await prompt(hooks)
    assert not outcome.blocked, outcome
    user_view = outcome.context[0]
    assert "poison" not in user_view  # the project's hooks cannot reach the user's
    project_cache = home / ".mewcode" / CACHE_DIR / cache_owner("hooks", "project", root=root)
    assert (project_cache / "poison").read_text() == "planted\n"
    assert "Read-only file system" in user_view  # the real home stays read-only
    assert real_caches(home) == [] and not (home / ".cache-try").exists()
    # the model's commands see no cache at all: the user's MewCode folder is hidden
    seen = box.wrap(["/bin/sh", "-c", f"ls -a {home}/.mewcode 2>&1"], cwd=root)
    listing = await asyncio.to_thread(
        subprocess.run, seen, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}
    )
    assert CACHE_DIR not in listing.stdout, listing.stdout
    # another project's hooks get another folder
    other = cache_owner("hooks", "project", root=tmp_path)
    assert other != cache_owner("hooks", "project", root=root)


@pytest.mark.parametrize(
    "name",
    ["../escape", "a/b", "a_b", "", ".hidden", "x" * 300, "имя", "a b", "..", "npm;rm -rf"],
)
def test_cache_folders_stay_inside_and_never_collide(place: Path, name: str) -> None:
    root = place / "project"
    state = place / "home" / ".mewcode"
    owner = cache_owner("mcp", "project", root=root, name=name)
    cache = tool_cache(state, owner)
    assert cache is not None
    assert Path(cache.path).parent == (state / CACHE_DIR).resolve()
    assert len(Path(cache.path).name) < 100
    others = {"a/b", "a_b", "../escape", "", "a b"} - {name}
    for other in others:
        assert cache_owner("mcp", "project", root=root, name=other) != owner
    assert cache_owner("mcp", "user", root=root, name=name) != owner


def test_a_cache_folder_that_is_a_link_is_not_used(place: Path) -> None:
    state = place / "home" / ".mewcode"
    (state / CACHE_DIR).mkdir(parents=True)
    (state / CACHE_DIR / "hooks-user").symlink_to(place / "home")
    assert tool_cache(state, "hooks-user") is None
    (state / CACHE_DIR / "hooks-user").unlink()
    (state / CACHE_DIR / "hooks-user").write_text("a file")
    assert tool_cache(state, "hooks-user") is None
    assert tool_cache(state, "../x") is None and tool_cache(state, ".x") is None


def test_no_cache_when_the_sandbox_is_off(place: Path) -> None:
    box = Sandbox(place / "project", SandboxSettings(enabled=False), home=place / "home")
    assert box.tool_cache("hooks-user") is None


# --- an exit 2 the sandbox caused ------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        'echo "note" >> "$HOME/hook.log"',  # dash: cannot create ...: Read-only file system
        f"{sys.executable} -c \"open('{{home}}/state.json', 'w')\" 2>&1 >&2; exit 2",
        "python3 {home}/.mewcode/private/guard.py",  # hidden user state: can't open file
        "mkdir {home}/.config/x 2>/dev/null || { echo 'mkdir: EROFS' >&2; exit 2; }",
    ],
)
async def test_a_refusal_by_the_sandbox_is_a_failure_not_a_block(place: Path, command: str) -> None:
    root, home = place / "project", place / "home"
    (home / ".mewcode" / "private").mkdir(parents=True)
    (home / ".mewcode" / "private" / "guard.py").write_text("import sys; sys.exit(0)\n")
    (home / ".config").mkdir()
    claude_hooks(root, "UserPromptSubmit", command.replace("{home}", str(home)))
    hooks, _ = engine(place)
    outcome = await prompt(hooks)
    assert not outcome.blocked, outcome
    [warning] = outcome.warnings
    assert "exit 2 before it read the event" in warning and "not a block" in warning
    assert "sandbox.allow_write" in warning


async def test_with_the_network_off_the_setting_named_is_the_network(place: Path) -> None:
    root = place / "project"
    fetch = (
        f'{sys.executable} -c "import socket,sys\n'
        "try: socket.create_connection(('1.1.1.1', 80), timeout=5)\n"
        'except OSError as e: print(e, file=sys.stderr); sys.exit(2)"'
    )
    claude_hooks(root, "UserPromptSubmit", fetch)
    hooks, _ = engine(place, network="off")
    outcome = await prompt(hooks)
    assert not outcome.blocked, outcome
    assert "sandbox.network: on" in outcome.warnings[0]


@pytest.mark.parametrize(
    "command",
    [
        # it read the event: its exit 2 is its decision, even echoing refusal words
        "cat >/dev/null; echo 'Read-only file system (os error 30)' >&2; exit 2",
        'read line; echo "blocked: $line" >&2; exit 2',
        # a part of the event is enough to have judged it
        "head -c 1 >/dev/null; echo '[Errno 13] EACCES' >&2; exit 2",
        # it blocks on purpose without reading, in its own words
        "echo 'Permission denied: no prompts during the freeze' >&2; exit 2",
        "exit 2",
        "echo 'Operation not permitted here' >&2; exit 2",
    ],
)
async def test_a_hooks_own_block_still_blocks(place: Path, command: str) -> None:
    root = place / "project"
    claude_hooks(root, "UserPromptSubmit", command)
    hooks, _ = engine(place)
    outcome = await prompt(hooks, "Read-only file system (os error 30) [Errno 13] EROFS EACCES")
    assert outcome.blocked, outcome


async def test_the_events_words_never_make_a_block_a_failure(place: Path) -> None:
    """The model shapes the event: a guard that echoes it and blocks stays a block,
    whatever refusal words the event carries, and a huge event changes nothing."""
    root = place / "project"
    guard = (
        f'{sys.executable} -c "import json,sys\n'
        "e = json.load(sys.stdin)\n"
        "print('refused: ' + e['prompt'][:200], file=sys.stderr); sys.exit(2)\""
    )
    claude_hooks(root, "UserPromptSubmit", guard)
    hooks, _ = engine(place)
    words = "cannot create /x: Read-only file system\n(os error 30)\nEROFS\n"
    outcome = await prompt(hooks, words + "y" * 300_000)
    assert outcome.blocked and "Read-only file system" in outcome.reason


async def test_a_huge_event_to_a_hook_that_never_reads_does_not_hang(place: Path) -> None:
    root = place / "project"
    claude_hooks(root, "UserPromptSubmit", 'echo "x" > "$HOME/never.log"')
    hooks, _ = engine(place)
    outcome = await prompt(hooks, "z" * 1_000_000)
    assert not outcome.blocked and outcome.warnings


async def test_pre_tool_use_too(place: Path) -> None:
    root = place / "project"
    claude_hooks(root, "PreToolUse", f"{UV} run --no-project .claude/guard.py")
    (root / ".claude" / "guard.py").write_text(
        "import json, sys\n"
        "call = json.load(sys.stdin)\n"
        "if 'rm -rf' in json.dumps(call['tool_input']):\n"
        "    print('no rm -rf', file=sys.stderr); sys.exit(2)\n"
    )
    hooks, _ = engine(place)
    ok = await hooks.dispatch(
        "PreToolUse",
        {"session_id": "s", "tool_name": "bash", "tool_input": {"command": "ls"}},
    )
    assert not ok.blocked and not ok.warnings, ok
    bad = await hooks.dispatch(
        "PreToolUse",
        {"session_id": "s", "tool_name": "bash", "tool_input": {"command": "rm -rf /"}},
    )
    assert bad.blocked and bad.reason == "no rm -rf"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "error: failed to create directory `/h/.cache/uv`: Read-only file system (os error 30)",
            "files",
        ),
        ("/bin/sh: 1: cannot create /h/x.log: Read-only file system", "files"),
        ("/bin/sh: 1: cannot create /h/.mewcode/x/y: Directory nonexistent", "files"),
        ("OSError: [Errno 30] Read-only file system: '/h/state.json'", "files"),
        (
            "Error: EROFS: read-only file system, open '/usr/lib/node_modules/x/memory.json'",
            "files",
        ),
        ("Error: EACCES: permission denied, mkdir '/h/.mewcode/x'", "files"),
        ("PermissionError: [Errno 13] Permission denied: '/h/.mewcode/config.yaml'", "files"),
        (
            "python3: can't open file '/h/.mewcode/x.py': [Errno 2] No such file or directory",
            "files",
        ),
        ("socket.gaierror: [Errno -3] Temporary failure in name resolution", "network"),
        ("error: Failed to fetch: dns error: failed to lookup address", "network"),
        ("OSError: [Errno 101] Network is unreachable", "network"),
    ],
)
def test_the_errors_the_sandbox_causes_are_recognised(text: str, kind: str) -> None:
    from mewcode_kernel.core.hooks.refusal import sandbox_refusal

    found = sandbox_refusal("some output\n" + text, network_off=True)
    assert found == (text, kind)
    if kind == "network":
        assert sandbox_refusal(text, network_off=False) is None


@pytest.mark.parametrize(
    "text",
    [
        "Permission denied",
        "Blocked: permission denied for rm -rf",
        "Operation not permitted here",
        "read-only mode: no writes allowed",
        "network unreachable? no: policy",
        "",
    ],
)
def test_a_guards_own_words_are_not_a_refusal(text: str) -> None:
    from mewcode_kernel.core.hooks.refusal import sandbox_refusal

    assert sandbox_refusal(text, network_off=True) is None
