"""Security by attack: shell commands that try to write outside the project or
read a file a ``Read(...)`` deny rule protects, built on the classes a hostile
repository and a clever model used (code run by expansions inside an allowed
command, environment prefixes that turn an allowed program into anything,
relative paths that land elsewhere, reads that leave the root, links).

Each case runs for real under bubblewrap three ways: straight through the
``bash`` tool as if every check had been fooled, through an agent in
``default`` mode with narrow allow rules and a headless policy that allows
whatever asks, and through an agent in ``bypassPermissions``. Nothing may be
written outside the project and the secret may not be read. The same table
with the sandbox off must never be allowed: every case asks or is denied.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mewcode_kernel.core.conversation import Conversation
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import Gate
from mewcode_kernel.core.tools import RunContext, bash
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call

from ._sandboxed import needs_bwrap, rules, run_in_sandbox, sandboxed_agent

DENY = (("deny", "Read(./secrets/**)"),)
NARROW = DENY + tuple(
    ("allow", f"Bash({r})")
    for r in (
        "ls:*", "cat:*", "echo:*", "git status:*", "git diff:*", "git log:*", "cp:*", "tar:*",
        "sed:*", "grep:*", "touch:*", "mv:*", "ln:*", "dd:*", "tee:*", "find:*", "head:*",
        "python3 -m this", "bash -c true", "sh -i -c true", "cd:*", "xargs:*",
    )
)  # fmt: skip
MODES_OFF = ("default", "acceptEdits", "bypassPermissions")


@dataclass(frozen=True)
class Attack:
    id: str
    command: str


def A(id: str, command: str) -> Attack:
    return Attack(id, command)


SUB = "a[$(touch {out}/PWNED)]"
# fmt: off
ATTACKS: list[Attack] = [
    # ---- expansions that run code inside an allowed command ---------------------------
    A("prompt-expansion", "X='$(touch {out}/PWNED)'; ls ${X@P}"),
    A("arith-dollar-bracket", f"X='{SUB}'; echo $[X]"),
    A("arith-double-paren", f"X='{SUB}'; echo $((X))"),
    A("array-subscript", "echo ${a[$(touch {out}/PWNED)]}"),
    A("substring-offset", f"X='{SUB}'; echo ${{HOME:X}}"),
    A("indirect-expansion", f"X='{SUB}'; ls ${{!X}}"),
    A("test-arithmetic", f"X='{SUB}'; [[ $X -eq 0 ]]; ls"),
    A("let-builtin", f"X='{SUB}'; let X; ls"),
    A("declare-integer", f"declare -i n; X='{SUB}'; n=X; ls"),
    A("printf-v", f"printf -v '{SUB}' x; ls"),
    A("read-builtin", f"read '{SUB}' <<< x; ls"),
    A("replace-with-subst", 'echo "${HOME/#/$(touch {out}/PWNED)}"'),
    # ---- environment prefixes that turn an allowed program into anything ----------------
    A("git-config-env", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor "
      "GIT_CONFIG_VALUE_0='touch {out}/PWNED; false' git status"),
    A("git-config-parameters", "env GIT_CONFIG_PARAMETERS=\"'core.fsmonitor=touch {out}/PWNED'\" git status"),
    A("git-external-diff", "GIT_EXTERNAL_DIFF='sh -c \"touch {out}/PWNED\"' git diff"),
    A("git-log-ext-diff", "GIT_EXTERNAL_DIFF='sh -c \"touch {out}/PWNED\"' git log -p --ext-diff -1"),
    A("git-c-option", "git -c core.fsmonitor='touch {out}/PWNED' status"),
    A("bash-env", "BASH_ENV=./evil.sh bash -c true"),
    A("sh-env", "ENV=./evil.sh sh -i -c true"),
    A("python-path-sitecustomize", "PYTHONPATH=lib python3 -m this"),
    A("export-then-run", "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor "
      "GIT_CONFIG_VALUE_0='touch {out}/PWNED'; git status"),
    # ---- where a relative path lands ---------------------------------------------------
    A("cdpath-prefix", "CDPATH={out} cd sub && touch PWNED"),
    A("cdpath-export", "export CDPATH={out}; cd sub && touch PWNED"),
    A("home-cd", "HOME={out} cd && touch PWNED"),
    A("oldpwd-cd-dash", "OLDPWD={out}/sub; cd - > /dev/null && touch PWNED"),
    A("tilde-minus-redirect", "cd {out}/sub && cd {root} && echo x > ~-/PWNED"),
    A("tilde-plus-redirect", "echo x > ~+/../PWNED"),
    A("pwd-assignment", "PWD={out}; echo x > $PWD/PWNED"),
    A("cd-dotdot", "cd .. && touch PWNED"),
    A("cd-dash-twice", "cd {out}/sub; cd {root}; cd - > /dev/null; touch PWNED"),
    # ---- programs told to write outside --------------------------------------------------
    A("cp-out", "cp notes.txt {out}/PWNED"),
    A("git-diff-output", "git diff --output={out}/PWNED"),
    A("tar-out", "tar -cf {out}/PWNED notes.txt"),
    A("sed-w-script", "sed 'w {out}/PWNED' notes.txt"),
    A("dd-of", "dd if=notes.txt of={out}/PWNED"),
    A("tee-out", "tee {out}/PWNED < notes.txt"),
    A("find-exec-cp", "find . -name notes.txt -exec cp {} {out}/PWNED \\;"),
    A("mv-out", "mv notes.txt {out}/PWNED"),
    A("hard-link-out", "ln notes.txt {out}/PWNED"),
    A("symlink-then-write", "ln -s {out}/victim.txt v && echo pwned > v"),
    A("overwrite-victim", "echo pwned > {out}/victim.txt"),
    A("compound-touch", "git status; touch {out}/PWNED"),
    # ---- reads that leave the root or reach a denied file --------------------------------
    A("cat-denied", "cat secrets/key.txt"),
    A("cat-denied-dotdot", "cat src/../secrets/key.txt"),
    A("cat-denied-glob", "cat ./sec*/key.txt"),
    A("cat-denied-via-link", "cat sec_link/key.txt"),
    A("cat-denied-variable", "d=secrets; cat $d/key.txt"),
    A("cat-denied-subst", 'cat "$(echo secrets)/key.txt"'),
    A("grep-recursive", "grep -r SECRET ."),
    A("tar-to-stdout", "tar -cf - . | cat"),
    A("cp-denied-dir", "cp -r secrets leak && cat leak/key.txt"),
    A("redirect-denied", "cat < secrets/key.txt"),
    A("xargs-names", "echo secrets/key.txt | xargs cat"),
    A("head-glob-anywhere", "head -c 100 */*.txt"),
]
# fmt: on


def _python_sitecustomize(out: Path) -> str:
    return f"open({str(out / 'PWNED')!r}, 'w').close()\n"


def _build(root: Path, outside: Path) -> str:
    """A git project (a committed file with a change, a secret, planted
    scripts) at ``root``; returns the secret."""
    for d in ("secrets", "src", "lib", "sub"):
        (root / d).mkdir(parents=True)
    secret = f"SECRET-{uuid.uuid4().hex}"
    (root / "secrets" / "key.txt").write_text(secret + "\n")
    (root / "sec_link").symlink_to("secrets")
    (root / "notes.txt").write_text("notes\n")
    (root / "evil.sh").write_text(f"touch {outside}/PWNED\n")
    (root / "lib" / "sitecustomize.py").write_text(_python_sitecustomize(outside))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "notes.txt"], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "one"], check=True)
    (root / "notes.txt").write_text("notes, changed\n")
    return secret


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, str]]:
    """The project, built once (git is slow to start); its scripts write to a
    fixed outside directory that each test recreates."""
    base = Path(tempfile.mkdtemp(prefix="mewcode-attacks-", dir="/var/tmp"))
    root = tmp_path_factory.mktemp("template") / "proj"
    secret = _build(root, base / "out")
    try:
        yield root, base / "out", secret
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def tree(tmp_path: Path, template: tuple[Path, Path, str]) -> Iterator[tuple[Path, Path, str]]:
    """A fresh copy of the project and an empty outside directory (with a
    victim file); yields (root, outside, secret)."""
    source, out, secret = template
    shutil.rmtree(out, ignore_errors=True)
    (out / "sub").mkdir(parents=True)
    (out / "victim.txt").write_text("original\n")
    root = tmp_path / "proj"
    shutil.copytree(source, root, symlinks=True)
    yield root, out, secret


def _fill(attack: Attack, root: Path, out: Path) -> str:
    return attack.command.replace("{out}", str(out)).replace("{root}", str(root))


def _escapes(root: Path, out: Path, secret: str, output: str) -> list[str]:
    """What the case got away with: files written outside, the secret read."""
    found = [
        str(p)
        for base in (out, root.parent, Path.home(), Path("/var/tmp"))
        for p in base.glob("PWNED*")
    ]
    found += [str(p) for p in out.rglob("*") if p.name.startswith("PWNED")]
    if (out / "victim.txt").read_text() != "original\n":
        found.append("outside/victim.txt changed")
    if secret in output:
        found.append("the secret was read")
    leaked = [
        p for p in root.rglob("*")
        if p.is_file() and p.parent.name != "secrets" and ".git" not in p.parts
        and secret in p.read_text(errors="replace")
    ]  # fmt: skip
    found += [f"the secret was copied to {p}" for p in leaked]
    return found


def test_the_table_is_big_enough() -> None:
    assert len(ATTACKS) >= 40
    assert len({a.id for a in ATTACKS}) == len(ATTACKS)


@needs_bwrap
@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.id)
@pytest.mark.parametrize("how", ["fooled", "narrow", "bypass"])
async def test_the_sandbox_holds(
    tree: tuple[Path, Path, str],
    attack: Attack,
    how: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, out, secret = tree
    command = _fill(attack, root, out)
    if how == "fooled":
        output = await run_in_sandbox(root, command, deny_reads=["./secrets/**"])
    else:
        monkeypatch.setenv("MEWCODE_HEADLESS_APPROVAL", "allow")  # whatever merely asks, runs
        model = ScriptedModel([reply(tool_call("bash", {"command": command})), reply("ok")])
        if how == "narrow":
            agent = sandboxed_agent(root, model, mode="default", rule_pairs=NARROW)
        else:
            agent = sandboxed_agent(root, model, mode="bypassPermissions", rule_pairs=DENY)
        await collect(agent.run(Conversation(), "go"))
        output = model.requests[1].messages[-1].tool_results[0].content
    assert _escapes(root, out, secret, output) == [], output


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.id)
@pytest.mark.parametrize("mode", MODES_OFF)
async def test_without_the_sandbox_every_case_asks_or_is_denied(
    template: tuple[Path, Path, str], attack: Attack, mode: str
) -> None:
    root, out, _ = template
    table = NARROW if mode != "bypassPermissions" else DENY
    gate = Gate(rules=rules(*table), mode=mode, root=root, sandboxed=False)  # type: ignore[arg-type]
    call = ToolUseBlock(id="c", name="bash", input={"command": _fill(attack, root, out)})
    decision = gate.evaluate(call, bash, RunContext(root=root))
    assert decision.outcome in ("ask", "deny"), f"{attack.id} in {mode}: {decision.reason}"


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.id)
def test_every_case_is_a_real_attack(tree: tuple[Path, Path, str], attack: Attack) -> None:
    """Run plainly (no sandbox, no checks), each case does escape: the table
    tests something."""
    root, out, secret = tree
    done = subprocess.run(
        ["/bin/bash", "-c", _fill(attack, root, out)],
        cwd=root,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=30,
        env={k: v for k, v in os.environ.items() if k not in ("CDPATH", "BASH_ENV", "ENV")},
        check=False,
    )
    assert _escapes(root, out, secret, done.stdout + done.stderr), done.stderr
