"""Security by attack: a sandboxed command must not create or change a
protected project path (what loaders read next session, what git and direnv
run): not when it exists, not when it does not exist yet, by any route
(redirects, mkdir, mv, ln, cp, tar, git, python, a symlinked parent, ``..``,
swapping a parent folder, ``/proc/self/cwd``, hard links). Every case runs
for real under bubblewrap through the ``bash`` tool, as if the permission
checks had been fooled, in a bare folder (nothing protected exists) and in
a repository that has some of them.

The stand-ins the sandbox puts where a protected path does not exist yet
(empty read-only folders) must be gone when the command ends, must stay
while another sandboxed process relies on them, and must be removed by the
janitor when the process is killed outright. The permission gate asks
before a tool writes any protected path (``.agents/skills`` included).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mewcode_kernel.core.config import SandboxSettings
from mewcode_kernel.core.conversation import Conversation
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest, Gate
from mewcode_kernel.core.project_paths import WATCHED_PATHS
from mewcode_kernel.core.sandbox import PROTECTED, Sandbox
from mewcode_kernel.core.sandbox.leases import Leases
from mewcode_kernel.core.tools import RunContext, builtin_tools
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call

from ._sandboxed import SUPPORT, needs_bwrap, run_in_sandbox, sandboxed_agent

TARGETS = (
    ".mcp.json",
    ".mewcode.yaml",
    ".envrc",
    ".git/config",
    ".git/hooks/pre-commit",
    ".git/commondir",
    ".git/modules/sub/config",
    ".git/worktrees/wt/commondir",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/skills/evil/SKILL.md",
    ".claude/agents/evil.md",
    ".agents/skills/evil/SKILL.md",
    ".mewcode/skills/evil/SKILL.md",
    ".mewcode/agents/evil.md",
    ".mewcode/hooks.yaml",
    ".mewcode/settings.local.yaml",
)

# each route runs once per target, with $t (the target), $d (its folder, or
# .), $top (its first name) and $s (a staging folder of its own)
# fmt: off
ROUTES: dict[str, str] = {
    "redirect": 'mkdir -p "$d"; echo PWNED > "$t"',
    "append": 'mkdir -p "$d"; echo PWNED >> "$t"',
    "touch": 'mkdir -p "$d"; touch "$t"',
    "mkdir-p": 'mkdir -p "$t"',
    "mv-prepared-top": 'mkdir -p "$s/$d"; echo PWNED > "$s/$t"; mv "$s/$top" "$top"',
    "mv-prepared-leaf": 'mkdir -p "$s/$d" "$d"; echo PWNED > "$s/$t"; mv -f "$s/$t" "$t"',
    "symlink-top": 'mkdir -p "$s/$d"; echo PWNED > "$s/$t"; ln -s "$PWD/$s/$top" "$top"',
    "symlink-leaf": 'echo PWNED > "$s.txt"; mkdir -p "$d"; ln -sf "$PWD/$s.txt" "$t"',
    "hard-link": 'echo PWNED > "$s.txt"; mkdir -p "$d"; ln -f "$s.txt" "$t"',
    "cp-r": 'mkdir -p "$s/$d"; echo PWNED > "$s/$t"; cp -r "$s/$top" .',
    "cp-file": 'echo PWNED > "$s.txt"; mkdir -p "$d"; cp "$s.txt" "$t"',
    "install-D": 'echo PWNED > "$s.txt"; install -D "$s.txt" "$t"',
    "tar-x": 'mkdir -p "$s/$d"; echo PWNED > "$s/$t"; tar -C "$s" -cf "$s.tar" "$top"; '
             'tar -xf "$s.tar"',
    "python-rename": 'python3 -c "import os,sys; t,s,top,d=sys.argv[1:]; '
                     "os.makedirs(os.path.join(s,d),exist_ok=True); "
                     "open(os.path.join(s,t),'w').write('PWNED'); "
                     'os.rename(os.path.join(s,top),top)" "$t" "$s" "$top" "$d"',
    "python-open": 'python3 -c "import os,sys; t=sys.argv[1]; '
                   "os.makedirs(os.path.dirname(t) or '.',exist_ok=True); "
                   "open(t,'w').write('PWNED')\" \"$t\"",
    "symlinked-parent": 'ln -sfn . "$s"; mkdir -p "$s/$d"; echo PWNED > "$s/$t"',
    "symlinked-up": 'mkdir -p sub; ln -sfn .. "sub/$s"; mkdir -p "sub/$s/$d"; '
                    'echo PWNED > "sub/$s/$t"',
    "dotdot": 'mkdir -p "sub/../$d"; echo PWNED > "sub/../$t"',
    "proc-self-cwd": 'mkdir -p "/proc/self/cwd/$d"; echo PWNED > "/proc/self/cwd/$t"',
    "swap-parent": 'mv "$top" "$s.old"; mkdir -p "$d"; echo PWNED > "$t"',
    "rm-then-create": 'rm -rf "$top"; mkdir -p "$d"; echo PWNED > "$t"',
    "git-init-config": 'git init -q . && git config core.fsmonitor "echo PWNED"; '
                       'git config --file "$t" core.fsmonitor "echo PWNED"',
}
# fmt: on


def _script(route: str) -> str:
    body = ROUTES[route]
    names = " ".join(f"'{t}'" for t in TARGETS)
    return (
        f"for t in {names}; do "
        'd=$(dirname "$t"); top=${t%%/*}; s="stage.$(echo "$t" | tr /. __)"; '
        f"( {body} ) >/dev/null 2>&1; done; echo done"
    )


def _layout(root: Path, kind: str) -> None:
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("notes\n")
    if kind == "repo":
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / ".mewcode" / "logs").mkdir(parents=True)
        (root / ".mewcode" / "logs" / "mcp-x.log").write_text("log\n")
        (root / ".agents").mkdir()
        (root / ".agents" / "README.md").write_text("agents\n")


def _snapshot(root: Path) -> dict[str, str]:
    """Every protected path under ``root`` as it is (kind and content, the
    whole tree of a folder) and the folders on the way to each."""
    out: dict[str, str] = {}
    for entry in (*PROTECTED, *WATCHED_PATHS):
        parts = entry.split("/")
        for n in range(1, len(parts) + 1):
            path = root.joinpath(*parts[:n])
            if os.path.lexists(path):
                out["/".join(parts[:n])] = _describe(path)
        base = root / entry
        if base.is_dir() and not base.is_symlink():
            for p in sorted(base.rglob("*")):
                out[str(p.relative_to(root))] = _describe(p)
    return out


def _describe(p: Path) -> str:
    if p.is_symlink():
        return f"link:{os.readlink(p)}"
    if p.is_dir():
        return "dir"
    return "file:" + p.read_text(errors="replace")


def _pwned(snapshot: dict[str, str]) -> list[str]:
    return [k for k, v in snapshot.items() if "PWNED" in v or v.startswith("link:")]


@pytest.fixture(params=["bare", "repo"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    _layout(root, request.param)
    return root


def test_the_targets_cover_the_protected_list() -> None:
    """Each protected entry is attacked (inside, or as the entry itself)."""
    for entry in (*PROTECTED, *WATCHED_PATHS):
        assert any(t == entry or t.startswith(entry + "/") for t in TARGETS), entry
    assert len(ROUTES) >= 20


@needs_bwrap
@pytest.mark.parametrize("route", list(ROUTES))
async def test_no_route_creates_or_changes_a_protected_path(project: Path, route: str) -> None:
    before = _snapshot(project)
    out = await run_in_sandbox(project, _script(route))
    assert "done" in out, out
    after = _snapshot(project)
    assert _pwned(after) == [], after
    assert after == before  # nothing made, changed, or left behind (no stand-in either)


@pytest.mark.parametrize("route", list(ROUTES))
def test_every_route_is_a_real_attack(tmp_path: Path, route: str) -> None:
    """Run plainly (no sandbox), each route does create protected paths: the
    table tests something."""
    root = tmp_path / "proj"
    _layout(root, "bare")
    done = subprocess.run(
        ["/bin/bash", "-c", _script(route)], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert "done" in done.stdout, done.stderr
    assert _snapshot(root) != {}, route


# ---- the stand-ins' lifetime ----------------------------------------------------------


def _box(root: Path) -> Sandbox:
    return Sandbox(root, SandboxSettings(), support=SUPPORT)


def _standins(box: Sandbox) -> list[str]:
    return [p.path for p in box._plan(False).placeholders]


@needs_bwrap
def test_stand_ins_exist_only_while_a_process_relies_on_them(tmp_path: Path) -> None:
    """A long-lived process keeps its stand-ins; a second one that comes and
    goes meanwhile leaves them in place (and protected); when the first ends
    they are gone."""
    root = tmp_path / "proj"
    _layout(root, "bare")
    box = _box(root)
    wanted = _standins(box)
    assert {os.path.basename(p) for p in wanted} >= {".mcp.json", ".git", ".claude", ".envrc"}
    before = sorted(os.listdir(root))
    first = subprocess.Popen(
        box.wrap(
            ["bash", "-c", "echo ready; read go; echo PWNED > .mcp.json; mkdir .git/x; echo end"]
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert first.stdout is not None and first.stdin is not None
        assert first.stdout.readline() == "ready\n"
        assert all(os.path.isdir(p) for p in wanted)  # in place while it runs
        second = subprocess.run(box.wrap(["true"]), capture_output=True, timeout=60)
        assert second.returncode == 0, second.stderr
        assert all(os.path.isdir(p) for p in wanted)  # the first still relies on them
        first.stdin.write("go\n")
        first.stdin.flush()
        rest = first.stdout.read()
        first.wait(60)  # the launcher ends once its stand-ins are handed back
    finally:
        if first.returncode is None:
            first.kill()
            first.wait(60)
    assert "Is a directory" in rest and "Read-only file system" in rest, rest
    assert rest.endswith("end\n"), rest
    assert first.returncode == 0
    assert sorted(os.listdir(root)) == before  # gone as the last process ended


def _started(box: Sandbox, script: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        box.wrap(["bash", "-c", f"echo ready; read go; {script}"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def _finish(proc: subprocess.Popen[str]) -> str:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    out = proc.stdout.read()
    proc.wait(60)
    return out


@needs_bwrap
def test_a_later_process_keeps_the_stand_ins_an_earlier_one_made(tmp_path: Path) -> None:
    """The second process starts while the first one's stand-ins are there
    and outlives it: they stay, and still hold, until the second ends."""
    root = tmp_path / "proj"
    _layout(root, "bare")
    box = _box(root)
    wanted = _standins(box)
    first = _started(box, "true")
    second = _started(
        box,
        "echo PWNED > .mcp.json; mkdir -p .agents/skills/evil .git/hooks .claude/x; "
        "echo [core] > .git/config; echo end",
    )
    try:
        assert _finish(first) == "" and first.returncode == 0
        assert all(os.path.isdir(p) for p in wanted)  # the second relies on them
        out = _finish(second)
    finally:
        for proc in (first, second):
            if proc.returncode is None:
                proc.kill()
                proc.wait(60)
    assert out.endswith("end\n") and "PWNED" not in out, out
    assert sorted(os.listdir(root)) == ["notes.txt", "sub"], out


@needs_bwrap
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_stand_ins_go_when_the_process_is_killed(tmp_path: Path, how: str) -> None:
    root = tmp_path / "proj"
    _layout(root, "bare")
    box = _box(root)
    wanted = _standins(box)
    before = sorted(os.listdir(root))
    proc = subprocess.Popen(
        box.wrap(["bash", "-c", "echo ready; read never"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    os.killpg(proc.pid, getattr(signal, how))  # as the bash tool and MCP SDK stop one
    proc.wait(60)
    if how == "SIGTERM":  # the launcher cleans up before it ends, then ends as told
        assert proc.returncode == -signal.SIGTERM
    for path in wanted:  # a SIGKILLed launcher leaves this to its janitor
        box.leases.wait_released(path)
    assert sorted(os.listdir(root)) == before


@needs_bwrap
def test_the_sandbox_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """A kernel that dies takes its sandboxed children with it (the launcher
    watches it), and their stand-ins go."""
    root = tmp_path / "proj"
    _layout(root, "bare")
    box = _box(root)
    argv = box.wrap(["bash", "-c", "echo ready; read never"])
    starter = (
        "import subprocess, sys, os\n"
        f"p = subprocess.Popen({argv!r}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n"
        "print(p.stdout.readline().strip(), p.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    kernel = subprocess.Popen(
        [sys.executable, "-c", starter], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert kernel.stdout is not None
    word, pid = kernel.stdout.readline().split()
    assert word == "ready"
    launcher = os.pidfd_open(int(pid))
    kernel.kill()
    kernel.wait(60)
    try:
        import select

        assert select.select([launcher], [], [], 60)[0]  # the launcher ended too
    finally:
        os.close(launcher)
    for path in _standins(box):
        box.leases.wait_released(path)
    assert sorted(os.listdir(root)) == ["notes.txt", "sub"]


@needs_bwrap
def test_a_stale_stand_in_is_swept(tmp_path: Path) -> None:
    """A stand-in whose janitor was killed too is removed when the next
    session's sandbox starts; a real file of the same name is never touched."""
    root = tmp_path / "proj"
    _layout(root, "bare")
    leases = Leases(str(tmp_path / "leases"))
    from mewcode_kernel.core.sandbox.leases import Placeholder

    held = leases.acquire([Placeholder(str(root), ".mcp.json", "dir")])
    assert (root / ".mcp.json").is_dir() and leases.in_use(str(root / ".mcp.json"))
    for h in held:
        os.close(h.fd)  # as if its janitor died: nobody holds the lease now
    assert not leases.in_use(str(root / ".mcp.json"))
    Sandbox(root, SandboxSettings(), support=SUPPORT, lease_dir=leases.directory)
    assert not (root / ".mcp.json").exists()
    # a real folder the person made where a stand-in was: left alone
    held = leases.acquire([Placeholder(str(root), ".envrc", "dir")])
    (root / ".envrc" / "mine").write_text("mine\n")
    leases.release(held)
    assert (root / ".envrc" / "mine").exists()


# ---- git init, and the approved retry ---------------------------------------------------


@needs_bwrap
@pytest.mark.parametrize("answer", [True, False])
async def test_git_init_fails_in_the_sandbox_and_runs_only_with_a_persons_yes(
    tmp_path: Path, answer: bool
) -> None:
    root = tmp_path / "proj"
    _layout(root, "bare")
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(allow=answer)

    model = ScriptedModel([reply(tool_call("bash", {"command": "git init -q ."})), reply("ok")])
    agent = sandboxed_agent(root, model, approval_handler=person)
    await collect(agent.run(Conversation(), "init"))
    [request] = asked
    assert "Read-only file system" in request.reason and "WITHOUT the sandbox" in request.reason
    assert (root / ".git" / "config").exists() is answer
    if not answer:
        assert sorted(os.listdir(root)) == ["notes.txt", "sub"]


# ---- the permission gate ------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        ".agents/skills/evil/SKILL.md",
        ".agents",
        ".AGENTS/skills/x.md",
        "nested/.agents/skills/x/SKILL.md",
        ".mewcode/skills/x/SKILL.md",
        ".claude/settings.json",
        ".git/config",
        ".mcp.json",
        ".envrc",
    ],
)
@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions"])
def test_writing_a_protected_path_asks_even_in_lenient_modes(
    tmp_path: Path, path: str, mode: str
) -> None:
    tools = {t.name: t for t in builtin_tools()}
    gate = Gate(mode=mode, root=tmp_path, sandboxed=False)  # type: ignore[arg-type]
    call = ToolUseBlock(id="c", name="write_file", input={"path": path, "content": "x"})
    decision = gate.evaluate(call, tools["write_file"], RunContext(root=tmp_path))
    if path.startswith(".AGENTS") and not gate_ignores_case(tmp_path):
        assert decision.outcome == "allow"  # a different folder on a case-sensitive disk
    else:
        assert decision.outcome == "ask", decision.reason
        assert "settings, hooks or git data" in decision.reason


def gate_ignores_case(root: Path) -> bool:
    from mewcode_kernel.core.fs import Workspace

    return Workspace(root).case_insensitive


@needs_bwrap
async def test_concurrent_commands_leave_nothing(tmp_path: Path) -> None:
    """Concurrent commands through the bash tool: each returns with its
    stand-ins handed back, and none is left once all are done."""
    root = tmp_path / "proj"
    _layout(root, "repo")
    box = _box(root)
    before = _snapshot(root)
    outs = await asyncio.gather(
        *(run_in_sandbox(root, f"echo {i} > f{i}.txt; ls -a", sandbox=box) for i in range(6))
    )
    assert all("exit code: 0" in o for o in outs)
    assert _snapshot(root) == before


# ---- protected paths reached through links, and git worktrees -----------------------------


@needs_bwrap
async def test_a_worktree_git_file_cannot_be_rewritten(tmp_path: Path) -> None:
    """In a git worktree ``.git`` is a file naming the real git folder:
    pointing it at a planted one would run that one's config."""
    root = tmp_path / "proj"
    _layout(root, "bare")
    (root / ".git").write_text("gitdir: /somewhere/.git/worktrees/proj\n")
    out = await run_in_sandbox(
        root,
        "mkdir -p evil && printf '[core]\\n\\tfsmonitor = echo PWNED\\n' > evil/config; "
        "echo 'gitdir: evil' > .git; rm -f .git; mv evil .git; echo done",
    )
    assert "done" in out
    assert (root / ".git").read_text() == "gitdir: /somewhere/.git/worktrees/proj\n"


@needs_bwrap
async def test_a_linked_skills_folder_and_its_target_stay_read_only(tmp_path: Path) -> None:
    """``.agents/skills`` is a link to ``skills-src``: neither the link (swap
    it for a real folder) nor the folder it leads to can be written."""
    root = tmp_path / "proj"
    _layout(root, "bare")
    (root / "skills-src" / "lint").mkdir(parents=True)
    (root / "skills-src" / "lint" / "SKILL.md").write_text("lint\n")
    (root / ".agents").mkdir()
    (root / ".agents" / "skills").symlink_to("../skills-src")
    before = _snapshot(root)
    out = await run_in_sandbox(
        root,
        "echo PWNED > skills-src/lint/SKILL.md; mkdir skills-src/evil; "
        "rm .agents/skills; mkdir -p .agents/skills/evil; echo PWNED > .agents/skills/evil/SKILL.md; "
        "mv .agents .agents.old; echo done",
    )
    assert "done" in out
    assert _snapshot(root) == before
    assert (root / "skills-src" / "lint" / "SKILL.md").read_text() == "lint\n"
    assert sorted(os.listdir(root / "skills-src")) == ["lint"]


def test_a_link_right_in_the_project_is_reported_as_not_protected(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shared = tmp_path / "shared-claude"
    shared.mkdir()
    root.mkdir()
    (root / ".claude").symlink_to(shared)
    (root / ".mcp.json").symlink_to(root / "missing.json")
    box = _box(root)
    info = box.describe()
    unprotected = " ".join(map(str, info["unprotected"]))  # type: ignore[call-overload]
    assert str(root / ".claude") in unprotected and str(root / ".mcp.json") in unprotected
    assert str(shared) in box.policy().readonly  # its target stays read-only


def test_the_mounts_come_in_order(tmp_path: Path) -> None:
    """Writable folders, then the pinned folders on the way, the read-only
    paths, the stand-ins, covered sockets, the user's folder (shown parts
    inside it), and the deny rules' hidden paths last."""
    from mewcode_kernel.core.sandbox import SandboxPolicy, bwrap_argv

    root = tmp_path / "r"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("")
    state = tmp_path / "state"
    (state / "skills").mkdir(parents=True)
    (root / "secret").mkdir()
    policy = SandboxPolicy(
        writable=(str(root),),
        pinned=(str(root / ".git"),),
        readonly=(str(root / ".git" / "config"),),
        placeholders=(str(root / ".mcp.json"),),
        sockets=("/run/x.sock",),
        user_state=(str(state),),
        user_shown=(str(state / "skills"),),
        hidden=(str(root / "secret"),),
    )
    text = " ".join(bwrap_argv("bwrap", policy, ["true"]))
    order = [
        f"--bind {root} {root}",
        f"--bind {root}/.git {root}/.git",
        f"--ro-bind {root}/.git/config {root}/.git/config",
        f"--ro-bind {root}/.mcp.json {root}/.mcp.json",
        "--ro-bind /dev/null /run/x.sock",
        f"--perms 0555 --tmpfs {state}",
        f"--ro-bind {state}/skills {state}/skills",
        f"--remount-ro {state}",
        f"--perms 0000 --tmpfs {root}/secret",
    ]
    positions = [text.index(piece) for piece in order]
    assert positions == sorted(positions)


@needs_bwrap
async def test_a_planted_commondir_never_reaches_the_persons_git(tmp_path: Path) -> None:
    """``.git/commondir`` sends git to another folder's config (its
    ``core.fsmonitor`` runs on ``git status``). Nothing can stand in for it
    (git stops at any file there), so it is removed as soon as it appears
    and once more when the command ends."""
    root = tmp_path / "proj"
    _layout(root, "repo")
    marker = tmp_path / "PWNED"
    out = await run_in_sandbox(
        root,
        "mkdir -p evil/objects evil/refs/heads && echo 'ref: refs/heads/main' > evil/HEAD && "
        f"printf '[core]\\n\\tfsmonitor = touch {marker}; false\\n' > evil/config && "
        'echo "$PWD/evil" > .git/commondir; '
        "mkdir -p .git/commondir.d; mv .git/commondir.d .git/commondir 2>/dev/null; "
        "git status >/dev/null 2>&1; echo done",
    )
    assert "done" in out
    _persons_git_status(root, marker)


def _persons_git_status(root: Path, marker: Path) -> None:
    assert not os.path.lexists(root / ".git" / "commondir")
    subprocess.run(["git", "status"], cwd=root, capture_output=True, timeout=60)
    assert not marker.exists()
    assert (root / "evil" / "config").exists()  # the rest of what it wrote is its own business


# ---- the other spawners: hook commands, run_python's children --------------------------------


@needs_bwrap
async def test_a_hook_command_cannot_create_a_protected_path_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    from mewcode_kernel.core.hooks.actions import run_shell
    from mewcode_kernel.core.lifecycle import HookEvent

    root = tmp_path / "proj"
    _layout(root, "bare")
    box = _box(root)
    event: HookEvent = "PostToolUse"
    ran = await run_shell(
        "cat > /dev/null; echo PWNED > .mcp.json; mkdir -p .claude; echo PWNED > .envrc; echo ok",
        event,
        "{}",
        cwd=root,
        env=dict(os.environ),
        timeout=60,
        wrap=lambda argv: box.wrap(argv, cwd=root),
    )
    assert "ok" in ran.output
    assert sorted(os.listdir(root)) == ["notes.txt", "sub"]


@needs_bwrap
def test_run_python_children_cannot_create_a_protected_path_and_leave_nothing(
    tmp_path: Path,
) -> None:
    from types import SimpleNamespace

    from magics.kernel_tools.execution import run_code

    root = tmp_path / "proj"
    _layout(root, "bare")
    code = (
        "import subprocess\n"
        "print(subprocess.run(['sh', '-c', 'echo PWNED > .mcp.json; git init -q .; echo ran'],"
        f" cwd={str(root)!r}, capture_output=True, text=True).stdout)\n"
    )
    result = run_code(SimpleNamespace(user_ns={}), code, timeout=60, sandbox=_box(root))
    assert result.error is None, result.error
    assert "ran" in result.output
    assert sorted(os.listdir(root)) == ["notes.txt", "sub"]
