"""Instruction files (discovery, ``@path`` imports, size cap) and memory notes
(files, ``/memory``, the ``# note`` shortcut) reaching the system prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from mewcode_kernel.core.commands.registry import run_command
from mewcode_kernel.core.prompt import load_instructions, memory_note_from_prompt
from mewcode_kernel.core.prompt.memory import MemoryStore
from mewcode_kernel.testing import collect, reply
from tests._context import make_session, responder, scripted


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    """A git repository with the project in ``repo/app``, and a home."""
    (tmp_path / "AGENTS.md").write_text("OUTSIDE the repository\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("repo-level agents\n")
    app = repo / "app"
    app.mkdir()
    (app / "MEWCODE.md").write_text("app mewcode\n")
    (app / "CLAUDE.md").write_text("app claude\n")
    home = tmp_path / "home"
    (home / ".mewcode").mkdir(parents=True)
    (home / ".mewcode" / "MEWCODE.md").write_text("user-wide\n")
    return app, home


def test_files_from_home_and_up_to_the_git_root_in_order(repo: tuple[Path, Path]) -> None:
    app, home = repo
    found = load_instructions(app, home=home)
    assert [f.label for f in found.files] == [
        "~/.mewcode/MEWCODE.md",
        "../AGENTS.md",
        "MEWCODE.md",
        "CLAUDE.md",
    ]
    text = found.render()
    assert "OUTSIDE" not in text
    assert text.index("user-wide") < text.index("repo-level") < text.index("app claude")
    assert not found.warnings


def test_a_symlinked_file_is_included_once(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("shared rules\n")
    (tmp_path / "CLAUDE.md").symlink_to(tmp_path / "AGENTS.md")
    found = load_instructions(tmp_path, home=tmp_path / "nohome")
    assert [f.label for f in found.files] == ["AGENTS.md"]


def test_imports_nest_at_most_four_deep_and_cycles_end(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "MEWCODE.md").write_text(
        "Style: see @docs/style.md.\n"
        "Not an import: `@docs/skip.md`, mail me at a@b.com, ping @alice\n"
        "```\n@docs/fenced.md\n```\n"
        "Missing: @docs/nope.md\n"
    )
    (tmp_path / "docs" / "style.md").write_text("STYLE @../MEWCODE.md @d1.md\n")
    for n in range(1, 6):
        (tmp_path / "docs" / f"d{n}.md").write_text(f"DEPTH{n} @d{n + 1}.md\n")
    for name in ("skip.md", "fenced.md"):
        (tmp_path / "docs" / name).write_text("SHOULD NOT APPEAR\n")
    found = load_instructions(tmp_path, home=tmp_path / "nohome")
    labels = [(f.label, f.depth, f.imported_by) for f in found.files]
    assert labels == [
        ("MEWCODE.md", 0, None),
        ("docs/style.md", 1, "MEWCODE.md"),
        ("docs/d1.md", 2, "docs/style.md"),
        ("docs/d2.md", 3, "docs/d1.md"),
        ("docs/d3.md", 4, "docs/d2.md"),
    ]
    text = found.render()
    assert "SHOULD NOT APPEAR" not in text and "DEPTH4" not in text
    assert any("@docs/nope.md was not found" in w for w in found.warnings)
    assert any("@d4.md not imported" in w for w in found.warnings)


def test_the_size_cap_cuts_and_warns(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("a" * 30_000)
    (tmp_path / "CLAUDE.md").write_text("b" * 30_000)
    found = load_instructions(tmp_path, home=tmp_path / "nohome", max_chars=40_000)
    assert found.truncated and found.total_chars == 60_000
    assert sum(len(f.text) for f in found.files) < 40_100
    assert found.warnings and "60,000 characters" in found.warnings[-1]


# --- memory -------------------------------------------------------------------------


def test_memory_store_add_list_remove(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, home=tmp_path / "home")
    assert store.notes() == [] and store.render() == ("", [])
    store.add("use pytest -q")
    store.add("answer in English", scope="user")
    third = store.add("  tabs,\n not spaces ")
    assert third.number == 2 and third.text == "tabs, not spaces"
    assert [(n.number, n.scope, n.text) for n in store.notes()] == [
        (1, "project", "use pytest -q"),
        (2, "project", "tabs, not spaces"),
        (3, "user", "answer in English"),
    ]
    assert store.remove(1).text == "use pytest -q"
    assert [n.text for n in store.notes()] == ["tabs, not spaces", "answer in English"]
    with pytest.raises(ValueError, match="no note 9"):
        store.remove(9)
    text, warnings = store.render()
    assert "## Project notes (.mewcode/MEMORY.md)" in text and "- tabs, not spaces" in text
    assert "## User notes (~/.mewcode/MEMORY.md)" in text and not warnings
    assert (tmp_path / ".mewcode" / "MEMORY.md").read_text().startswith("# MewCode memory")


def test_hand_edits_reach_the_prompt(tmp_path: Path) -> None:
    (tmp_path / ".mewcode").mkdir()
    (tmp_path / ".mewcode" / "MEMORY.md").write_text("Free text the user wrote.\n- a bullet\n")
    store = MemoryStore(tmp_path, home=tmp_path / "home")
    assert "Free text the user wrote." in store.render()[0]
    assert [n.text for n in store.notes()] == ["a bullet"]


@pytest.mark.parametrize(
    ("prompt", "note"),
    [
        ("# always run ruff", "always run ruff"),
        ("  # trailing space  ", "trailing space"),
        ("## a heading", None),
        ("#no space", None),
        ("# title\nbody", None),
        ("# ", None),
        ("plain", None),
    ],
)
def test_the_remember_shortcut(prompt: str, note: str | None) -> None:
    assert memory_note_from_prompt(prompt) == note


async def test_notes_and_instructions_reach_the_system_prompt(repo: tuple[Path, Path]) -> None:
    app, home = repo
    MemoryStore(app, home=home).add("the build uses make")
    model = scripted(responder(lambda r, p: reply("ok")))
    session = make_session(app, model, home=home)
    await collect(session.run("hello"))
    system = model.requests[0].system
    for text in ("user-wide", "repo-level agents", "app mewcode", "app claude"):
        assert text in system
    assert "- the build uses make" in system


async def test_a_note_added_mid_session_is_a_reminder_until_the_next_session(
    tmp_path: Path,
) -> None:
    model = scripted(responder(lambda r, p: reply("ok")))
    session = make_session(tmp_path, model)
    await collect(session.run("one"))
    result = await run_command(session, "/memory add prefer pathlib")
    assert not result.error and result.data["number"] == 1
    await collect(session.run("two"))
    await collect(session.run("three"))
    first, second, third = model.requests
    assert first.system == second.system == third.system  # byte-stable mid-session
    assert "prefer pathlib" not in second.system
    reminders = [b.text for b in second.messages[-1].content if "system-reminder" in b.text]
    assert reminders and "prefer pathlib" in reminders[0]
    assert not any("system-reminder" in b.text for b in third.messages[-1].content)
    await run_command(session, "/clear")
    await collect(session.run("four"))
    assert "- prefer pathlib" in model.requests[-1].system


async def test_memory_command(tmp_path: Path) -> None:
    session = make_session(tmp_path, scripted(responder(lambda r, p: reply("ok"))))
    empty = await run_command(session, "/memory")
    assert empty.data == [] and "No memory notes" in empty.markdown
    await run_command(session, "/memory add --user keep | pipes")
    await run_command(session, "/memory add project thing")
    shown = await run_command(session, "/memory")
    assert [(n["number"], n["scope"]) for n in shown.data] == [(1, "project"), (2, "user")]
    assert "keep \\| pipes" in shown.markdown
    removed = await run_command(session, "/memory remove 2")
    assert not removed.error and removed.data["scope"] == "user"
    assert (await run_command(session, "/memory remove x")).error
    assert (await run_command(session, "/memory remove 7")).error
    assert (await run_command(session, "/memory add")).error
    assert (await run_command(session, "/memory frobnicate")).error
