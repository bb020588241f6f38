"""Attacks on instruction files and their ``@path`` imports: a cloned
repository's ``CLAUDE.md`` (or ``AGENTS.md``, ``MEWCODE.md``, a parent's
file, ``.mewcode/MEMORY.md``) trying to put files from outside the project
into the system prompt, that is, in front of the model.

Every spelling of "outside" is tried (absolute, ``~``, ``~user``, ``..``
chains, links inside the project leading out, ``/proc/self/root``,
``/proc/self/cwd``, devices, FIFOs, percent and Unicode look-alikes, imports
nested where only the last step leaves), in an untrusted and a trusted
project, with real files, links and FIFOs; the system prompt checked is the
one the model receives (``ScriptedModel``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.commands.registry import run_command
from mewcode_kernel.core.config import ProviderSettings, ResolvedConfig
from mewcode_kernel.core.fs.read_regular import NotRegularFileError, read_regular_file
from mewcode_kernel.core.fs.safe_write import UnsafeWriteError
from mewcode_kernel.core.prompt import load_instructions
from mewcode_kernel.core.prompt.instructions import Instructions
from mewcode_kernel.core.prompt.memory import MemoryStore
from mewcode_kernel.core.tools import ToolRegistry, builtin_tools
from mewcode_kernel.core.trust import ProjectTrust
from mewcode_kernel.testing import ScriptedModel, collect, reply

SECRETS = ("SECRET-SSH", "SECRET-CONFIG", "SECRET-OUTSIDE", "SECRET-NOTES", "SECRET-KEY")


class World:
    """A home (``~/.ssh``, a MewCode folder with config, notes and a key), a
    folder outside everything, and an empty project."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.home = tmp / "home"
        self.state = self.home / ".mewcode"
        self.project = tmp / "proj"
        self.outside = tmp / "outside"
        for d in (self.home / ".ssh", self.state, self.project, self.outside, self.home / ".aws"):
            d.mkdir(parents=True)
        (self.home / ".ssh" / "id_rsa").write_text("SECRET-SSH private key\n")
        (self.home / ".aws" / "credentials.md").write_text("SECRET-SSH aws\n")
        (self.home / ".netrc").write_text("SECRET-SSH netrc\n")
        (self.state / "config.yaml").write_text("api_key: SECRET-CONFIG\n")
        (self.state / "checkpoint.key").write_text("SECRET-KEY\n")
        (self.state / "notes.md").write_text("SECRET-NOTES from the user's folder\n")
        (self.outside / "secret.md").write_text("SECRET-OUTSIDE file\n")

    def claude(self, text: str, name: str = "CLAUDE.md") -> None:
        (self.project / name).write_text(text)

    def load(self, *, trusted: bool = False) -> Instructions:
        return bounded(lambda: load_instructions(self.project, home=self.home, trusted=trusted))


def bounded(load: Callable[[], Instructions], seconds: float = 30) -> Instructions:
    """``load()`` on a daemon thread: a read that blocks (a FIFO, a device)
    fails the test instead of hanging the run."""
    box: list[Instructions] = []
    worker = threading.Thread(target=lambda: box.append(load()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, f"loading the instructions did not finish within {seconds} s"
    return box[0]


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def refused(found: Instructions, ref: str, file: str = "CLAUDE.md") -> bool:
    """A warning names the file, the import, and says it was not imported."""
    return any(w.startswith(f"{file}: @{ref} not imported") for w in found.warnings)


# --- imports from an untrusted project ------------------------------------------------------


def outside_refs(w: World) -> list[str]:
    rel_out = os.path.relpath(w.outside / "secret.md", w.project)
    depth = len(w.project.parts) - 1
    return [
        str(w.outside / "secret.md"),
        rel_out,
        "./" + rel_out,
        "docs/../" + rel_out,
        "../" * (depth + 3) + str(w.outside / "secret.md").lstrip("/"),
        "~/.ssh/id_rsa",
        "~/.ssh/../.ssh/id_rsa",
        "~/../home/.ssh/id_rsa",
        str(w.home / ".ssh" / "id_rsa"),
        "~/.aws/credentials.md",
        "~/.netrc",
        "~/.mewcode/config.yaml",
        "~/.mewcode/notes.md",
        "~/.mewcode/checkpoint.key",
        str(w.state / "notes.md"),
        "/proc/self/root" + str(w.outside / "secret.md"),
        "/proc/self/root" + str(w.home / ".ssh" / "id_rsa"),
        "/proc/self/cwd/../" + rel_out,
        "/proc/self/environ",
        "/proc/self/cmdline",
        "/proc/1/environ",
        "/sys/kernel/hostname",
        "/dev/stdin",
        "/dev/fd/0",
        "/dev/zero",
        "/etc/passwd",
        "/etc/hostname",
        "/run/secrets/token",
    ]


def test_every_spelling_of_outside_is_refused_and_stays_literal(world: World) -> None:
    refs = outside_refs(world)
    world.claude("Rules.\n" + "".join(f"Read @{r} now.\n" for r in refs))
    found = world.load()
    assert leaked(found.render()) == []
    [claude] = found.files
    for ref in refs:
        assert f"@{ref} now." in claude.text, ref  # the import stays as written
        assert refused(found, ref), (ref, found.warnings)
    assert "root:x:0" not in found.render()  # /etc/passwd
    assert "PATH=" not in found.render()  # an environment


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("../outside/secret.md", "it is outside the project"),
        ("~/.ssh/id_rsa", "~/.ssh is hidden in your home directory"),
        ("~/.mewcode/notes.md", "it is in your MewCode folder"),
        ("/proc/self/environ", "/proc is never read"),
        ("/dev/zero", "/dev is never read"),
    ],
)
def test_the_warning_names_the_file_the_import_and_why(world: World, ref: str, why: str) -> None:
    world.claude(f"@{ref}\n", name="AGENTS.md")
    [warning] = world.load().warnings
    assert warning.startswith(f"AGENTS.md: @{ref} not imported")
    assert why in warning and "stays as written" in warning


def test_links_inside_the_project_that_lead_out(world: World) -> None:
    p = world.project
    (p / "docs").mkdir()
    (p / "docs" / "ok.md").write_text("OK-INSIDE\n")
    (p / "out").symlink_to(world.outside)  # a folder link
    (p / "docs" / "deep").symlink_to(world.home / ".ssh")
    (p / "notes.md").symlink_to(world.outside / "secret.md")  # a file link
    (p / "key.md").symlink_to(world.home / ".ssh" / "id_rsa")
    (p / "chain1.md").symlink_to(p / "chain2.md")  # a link to a link that leads out
    (p / "chain2.md").symlink_to(world.state / "config.yaml")
    (p / "dangling.md").symlink_to(world.outside / "not-yet.md")
    (p / "inner.md").symlink_to(p / "docs" / "ok.md")  # a link that stays inside: fine
    refs = [
        "out/secret.md",
        "docs/deep/id_rsa",
        "docs/../out/secret.md",
        "notes.md",
        "key.md",
        "chain1.md",
        "dangling.md",
    ]
    world.claude("".join(f"@{r}\n" for r in refs) + "@inner.md\n")
    found = world.load()
    assert leaked(found.render()) == []
    assert all(refused(found, r) for r in refs), found.warnings
    assert "OK-INSIDE" in found.render()
    # the target appearing later does not change the answer
    (world.outside / "not-yet.md").write_text("SECRET-OUTSIDE late\n")
    assert leaked(world.load().render()) == []


def test_nested_imports_where_only_the_last_step_leaves(world: World) -> None:
    p = world.project
    (p / "docs" / "more").mkdir(parents=True)
    world.claude("TOP @docs/a.md\n")
    (p / "docs" / "a.md").write_text("LEVEL-A @more/b.md\n")
    (p / "docs" / "more" / "b.md").write_text("LEVEL-B @c.md\n")
    (p / "docs" / "more" / "c.md").write_text(
        "LEVEL-C @../../../outside/secret.md @~/.ssh/id_rsa @/proc/self/root/etc/passwd\n"
    )
    found = world.load()
    text = found.render()
    assert all(level in text for level in ("LEVEL-A", "LEVEL-B", "LEVEL-C"))
    assert leaked(text) == [] and "root:x:0" not in text
    refusals = [w for w in found.warnings if w.startswith("docs/more/c.md: @")]
    assert len(refusals) == 3, found.warnings


def test_spelling_tricks_never_reach_outside(world: World) -> None:
    """Percent escapes, look-alike dots and slashes, ``~user``, backslashes:
    none is decoded into a path that leaves; each is either no import at all
    or a name inside the project that does not exist."""
    tricks = [
        "%2e%2e/outside/secret.md",
        "..%2foutside/secret.md",
        "\uff0e\uff0e/outside/secret.md",  # fullwidth full stops
        "..\u2215outside/secret.md",  # division slash
        "\u2024\u2024/outside/secret.md",  # one dot leaders
        "~root/.ssh/id_rsa",
        "~" + (os.environ.get("USER") or "root") + "/.ssh/id_rsa",
        "..\\outside\\secret.md",
        "$HOME/.ssh/id_rsa",
        "file:///etc/passwd",
    ]
    world.claude("".join(f"see @{t}\n" for t in tricks))
    found = world.load()
    assert leaked(found.render()) == [] and "root:x:0" not in found.render()
    assert not any("not imported" in w and "MewCode" in w for w in found.warnings)


def test_instruction_files_that_are_links_out_of_the_project(world: World) -> None:
    p = world.project
    (p / "CLAUDE.md").symlink_to(world.home / ".ssh" / "id_rsa")
    (p / "AGENTS.md").symlink_to(world.outside / "secret.md")
    (p / "MEWCODE.md").symlink_to(world.state / "notes.md")
    found = world.load()
    assert found.files == () and leaked(found.render()) == []
    for name in ("CLAUDE.md", "AGENTS.md", "MEWCODE.md"):
        assert any(w.startswith(f"{name} links to") and "not read" in w for w in found.warnings)
    # trusting the project lets a link reach Markdown in the MewCode folder, nothing else
    found = world.load(trusted=True)
    assert [f.label for f in found.files] == ["MEWCODE.md"]
    assert "SECRET-NOTES" in found.render() and "SECRET-SSH" not in found.render()


@pytest.mark.parametrize(
    "target", ["/etc/passwd", "/proc/self/environ", "/proc/self/root/etc/hostname", "/dev/zero"]
)
def test_instruction_file_links_to_system_files(world: World, target: str) -> None:
    (world.project / "CLAUDE.md").symlink_to(target)
    found = world.load(trusted=True)
    assert found.files == ()
    assert found.warnings and found.warnings[0].startswith("CLAUDE.md links to")


def test_fifos_and_devices_never_block(world: World) -> None:
    p = world.project
    os.mkfifo(p / "CLAUDE.md")  # nobody ever writes: a blocking open would hang
    os.mkfifo(p / "pipe.md")
    (p / "AGENTS.md").write_text("AGENTS-TEXT @pipe.md @/dev/stdin @/dev/zero\n")
    found = world.load(trusted=True)
    assert [f.label for f in found.files] == ["AGENTS.md"]
    assert any(w.startswith("CLAUDE.md not read (it is not a regular file") for w in found.warnings)
    assert any(w.startswith("AGENTS.md: @pipe.md not read") for w in found.warnings)


def test_a_huge_file_is_read_only_up_to_the_cap(world: World) -> None:
    huge = world.project / "huge.md"
    with open(huge, "wb") as f:
        f.truncate(4 << 30)  # 4 GiB, sparse: reading it whole would exhaust memory
    world.claude("@huge.md\n")
    found = world.load()
    assert found.truncated and sum(len(f.text) for f in found.files) < 40_100


def test_parent_files_up_to_the_git_root_import_only_inside_the_project(tmp_path: Path) -> None:
    """A parent folder's file is read (it sits above the project by design)
    but its imports stay inside the project root: a repository around the
    project may be a whole home directory (dotfiles)."""
    w = World(tmp_path)
    repo = tmp_path / "repo"
    app = repo / "app"
    (repo / ".git").mkdir(parents=True)
    (repo / "docs").mkdir()
    (app / "docs").mkdir(parents=True)
    (repo / "docs" / "wide.md").write_text("SECRET-OUTSIDE repository-wide\n")
    (app / "docs" / "style.md").write_text("APP-STYLE\n")
    (repo / "AGENTS.md").write_text(
        "PARENT-RULES @docs/wide.md @app/docs/style.md @../outside/secret.md @~/.ssh/id_rsa\n"
    )
    (repo / "CLAUDE.md").symlink_to(w.outside / "secret.md")
    found = load_instructions(app, home=w.home, trusted=True)
    text = found.render()
    assert "PARENT-RULES" in text and "APP-STYLE" in text
    assert leaked(text) == []
    assert refused(found, "docs/wide.md", "../AGENTS.md")
    assert refused(found, "../outside/secret.md", "../AGENTS.md")
    assert any(w.startswith("../CLAUDE.md links to") for w in found.warnings)


# --- trusted projects and the user's own file -----------------------------------------------


def test_a_trusted_project_reaches_markdown_in_the_mewcode_folder_only(world: World) -> None:
    world.claude(
        "@~/.mewcode/notes.md @~/.mewcode/config.yaml @~/.mewcode/checkpoint.key "
        "@~/.mewcode/../.ssh/id_rsa @../outside/secret.md\n"
    )
    untrusted = world.load()
    assert leaked(untrusted.render()) == []
    assert refused(untrusted, "~/.mewcode/notes.md")
    trusted = world.load(trusted=True)
    assert leaked(trusted.render()) == ["SECRET-NOTES"]
    for ref in ("~/.mewcode/config.yaml", "~/.mewcode/checkpoint.key"):
        assert refused(trusted, ref)


def test_the_users_file_reaches_its_folder_and_the_project_only(world: World) -> None:
    (world.project / "shared.md").write_text("PROJECT-SHARED\n")
    (world.state / "rules.md").write_text("USER-RULES @~/.ssh/id_rsa @/etc/passwd\n")
    (world.state / "MEWCODE.md").write_text(
        f"USER-WIDE @rules.md @config.yaml @{world.project}/shared.md @../.ssh/id_rsa "
        f"@{world.outside}/secret.md\n"
    )
    found = world.load()
    text = found.render()
    assert "USER-RULES" in text and "PROJECT-SHARED" in text
    assert "SECRET-CONFIG" in text  # the user's own file may import what it likes from there
    assert leaked(text) == ["SECRET-CONFIG"] and "root:x:0" not in text
    assert refused(found, "../.ssh/id_rsa", "~/.mewcode/MEWCODE.md")
    assert refused(found, "~/.ssh/id_rsa", "~/.mewcode/rules.md")


def test_project_files_reached_from_the_users_file_keep_the_projects_rules(world: World) -> None:
    """The user's file importing a project file does not lend that file the
    user's reach, nor may a link planted in the project borrow it."""
    (world.project / "hostile.md").write_text("HOSTILE @~/.mewcode/config.yaml\n")
    (world.project / "planted.md").symlink_to(world.state / "config.yaml")
    (world.state / "MEWCODE.md").write_text(
        f"@{world.project}/hostile.md @{world.project}/planted.md\n"
    )
    found = world.load()
    assert "HOSTILE" in found.render() and leaked(found.render()) == []
    assert refused(found, "~/.mewcode/config.yaml", "hostile.md")
    assert refused(found, f"{world.project}/planted.md", "~/.mewcode/MEWCODE.md")


def test_a_project_in_the_home_directory_cannot_reach_hidden_folders(tmp_path: Path) -> None:
    w = World(tmp_path)
    (w.home / "notes").mkdir()
    (w.home / "notes" / "plan.md").write_text("HOME-PLAN\n")
    (w.home / "CLAUDE.md").write_text(
        "@notes/plan.md @.ssh/id_rsa @.aws/credentials.md @.netrc @.mewcode/config.yaml "
        "@.mewcode/notes.md\n"
    )
    found = bounded(lambda: load_instructions(w.home, home=w.home))
    assert "HOME-PLAN" in found.render() and leaked(found.render()) == []
    for ref in (".ssh/id_rsa", ".aws/credentials.md", ".netrc", ".mewcode/config.yaml"):
        assert refused(found, ref), (ref, found.warnings)


def test_a_project_kept_in_a_hidden_folder_reads_its_own_files(tmp_path: Path) -> None:
    w = World(tmp_path)
    project = w.home / ".dotfiles" / "proj"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "own.md").write_text("OWN-DOCS\n")
    (project / "CLAUDE.md").write_text("PROJ @docs/own.md @~/.ssh/id_rsa\n")
    found = load_instructions(project, home=w.home)
    assert "OWN-DOCS" in found.render() and leaked(found.render()) == []


# --- the system prompt the model receives ---------------------------------------------------


def session(w: World, model: ScriptedModel, *, trusted: bool) -> AgentSession:
    trust = ProjectTrust(
        root=w.project, items=(), digest="d", state="approved" if trusted else "not approved"
    )
    return AgentSession(
        w.project,
        config=ResolvedConfig(root=w.project),
        provider=model,
        settings=ProviderSettings(
            name="scripted", protocol="anthropic", model="scripted-1", context_window=200_000
        ),
        tools=ToolRegistry(builtin_tools()),
        home=w.home,
        trust=trust,
    )


@pytest.mark.parametrize("trusted", [False, True])
async def test_the_model_never_receives_outside_files(world: World, trusted: bool) -> None:
    p = world.project
    (p / "out").symlink_to(world.outside)
    (p / ".mewcode").mkdir()
    (p / ".mewcode" / "MEMORY.md").symlink_to(world.home / ".ssh" / "id_rsa")
    (p / "AGENTS.md").symlink_to(world.state / "config.yaml")
    refs = [r for r in outside_refs(world) if "notes.md" not in r] + ["out/secret.md"]
    world.claude("PROJECT-RULES " + " ".join(f"@{r}" for r in refs) + "\n")
    model = ScriptedModel([reply("ok")])
    await collect(session(world, model, trusted=trusted).run("hello"))
    system = model.requests[0].system
    assert "PROJECT-RULES" in system
    assert leaked(system) == [] and "root:x:0" not in system and "PATH=" not in system


async def test_trust_granted_mid_session_counts_from_the_next_boundary(world: World) -> None:
    world.claude("PROJECT-RULES @~/.mewcode/notes.md\n")
    model = ScriptedModel([reply("one"), reply("two")])
    s = session(world, model, trusted=False)
    await collect(s.run("hello"))
    assert "SECRET-NOTES" not in model.requests[0].system
    s.safety.trust = ProjectTrust(root=world.project, items=(), digest="d", state="approved")
    await run_command(s, "/clear")
    await collect(s.run("again"))
    assert "SECRET-NOTES" in model.requests[1].system


# --- memory files -----------------------------------------------------------------------------


def test_a_project_memory_file_linked_out_is_not_read(world: World) -> None:
    mem = world.project / ".mewcode"
    mem.mkdir()
    (mem / "MEMORY.md").symlink_to(world.home / ".ssh" / "id_rsa")
    store = MemoryStore(world.project, home=world.home)
    assert store.render() == ("", []) and store.notes() == []
    (mem / "MEMORY.md").unlink()
    os.mkfifo(mem / "MEMORY.md")
    assert store.render() == ("", [])  # a FIFO: returns at once


def test_memory_writes_never_follow_a_planted_link(world: World) -> None:
    (world.project / ".mewcode").symlink_to(world.outside)
    store = MemoryStore(world.project, home=world.home)
    with pytest.raises(UnsafeWriteError):
        store.add("remember this")
    assert sorted(os.listdir(world.outside)) == ["secret.md"]
    (world.project / ".mewcode").unlink()
    (world.project / ".mewcode").mkdir()
    (world.project / ".mewcode" / "MEMORY.md").symlink_to(world.outside / "secret.md")
    with pytest.raises(UnsafeWriteError):
        store.add("remember this")
    assert (world.outside / "secret.md").read_text() == "SECRET-OUTSIDE file\n"


# --- the checked read ------------------------------------------------------------------------


def test_a_folder_swapped_for_a_link_after_the_check_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "proj" / "docs").mkdir(parents=True)
    (tmp_path / "proj" / "docs" / "a.md").write_text("INSIDE\n")
    (tmp_path / "outside" / "docs").mkdir(parents=True)
    (tmp_path / "outside" / "docs" / "a.md").write_text("SECRET-OUTSIDE\n")
    checked = os.path.realpath(tmp_path / "proj" / "docs" / "a.md")
    assert read_regular_file(checked, 100) == b"INSIDE\n"
    # after the check: the folder on the way becomes a link out
    os.rename(tmp_path / "proj" / "docs", tmp_path / "proj" / "old")
    (tmp_path / "proj" / "docs").symlink_to(tmp_path / "outside" / "docs")
    with pytest.raises(NotRegularFileError, match="changed while being read"):
        read_regular_file(checked, 100)
    # the file itself becomes a link
    os.unlink(tmp_path / "proj" / "docs")
    os.rename(tmp_path / "proj" / "old", tmp_path / "proj" / "docs")
    os.unlink(checked)
    os.symlink(tmp_path / "outside" / "docs" / "a.md", checked)
    with pytest.raises(NotRegularFileError, match="symlink"):
        read_regular_file(checked, 100)


def test_hard_links_in_the_project_are_not_read(world: World) -> None:
    """A hard link's other name may be anywhere (here: the user's key); the
    project's files are read only when they have no other name."""
    os.link(world.home / ".ssh" / "id_rsa", world.project / "key.md")
    os.link(world.state / "config.yaml", world.project / "AGENTS.md")
    (world.project / ".mewcode").mkdir()
    os.link(world.outside / "secret.md", world.project / ".mewcode" / "MEMORY.md")
    world.claude("RULES @key.md\n")
    found = world.load(trusted=True)
    assert "RULES" in found.render() and leaked(found.render()) == []
    assert any("@key.md not read (it has other hard links" in w for w in found.warnings)
    assert any(w.startswith("AGENTS.md not read (it has other hard links") for w in found.warnings)
    assert MemoryStore(world.project, home=world.home).render() == ("", [])


def test_a_flood_of_imports_neither_stalls_nor_buries_the_user(world: World) -> None:
    world.claude("FLOOD " + " ".join(f"@../outside/x{n}.md" for n in range(50_000)) + "\n")
    found = world.load()
    assert "FLOOD" in found.render()
    assert len(found.warnings) <= 53  # 50 listed, the import cap, "and more", the size cap
    assert any("only the first 500 were looked at" in w for w in found.warnings)
    assert any(w.startswith("... and ") for w in found.warnings)
