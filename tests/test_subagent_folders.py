"""Subagent definitions in subfolders, as Claude Code reads them
(``.claude/agents/team/builder.md``), and what a hostile repository can put
there: links out of the project, loops, FIFOs, deep or huge trees, two
files claiming one name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mewcode_kernel.core.subagents import load_catalog
from mewcode_kernel.core.subagents.catalog import MAX_DEPTH, MAX_FILES


def agent(path: Path, name: str, body: str = "You help.", **extra: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = "".join(f"{k}: {v}\n" for k, v in extra.items())
    path.write_text(f"---\nname: {name}\ndescription: The {name} role.\n{fields}---\n{body}\n")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


def problems(root: Path, home: Path) -> str:
    return "\n".join(str(p) for p in load_catalog(root, home=home).problems)


def test_definitions_in_subfolders_are_found(root: Path, home: Path) -> None:
    agent(root / ".claude/agents/team/builder.md", "builder")
    agent(root / ".claude/agents/team/qa/validator.md", "validator")
    agent(root / ".mewcode/agents/ops/deployer.md", "deployer")
    agent(home / ".claude/agents/personal/notes/scribe.md", "scribe")
    catalog = load_catalog(root, home=home)
    for name in ("builder", "validator", "deployer", "scribe"):
        found = catalog.resolve(name)
        assert found is not None, name
    assert catalog.require("builder").path == root / ".claude/agents/team/builder.md"
    assert catalog.require("scribe").source == "user"
    assert not catalog.problems


def test_a_clash_in_one_folder_is_reported_and_the_shallower_one_used(
    root: Path, home: Path
) -> None:
    top = agent(root / ".claude/agents/builder.md", "builder", "Top.")
    deep = agent(root / ".claude/agents/team/builder.md", "builder", "Deep.")
    agent(root / ".claude/agents/team/other.md", "Builder", "Case.")  # a clash by case too
    catalog = load_catalog(root, home=home)
    assert catalog.require("builder").path == top
    said = problems(root, home)
    assert f"{deep}: subagent definition skipped: its name 'builder' is taken by {top}" in said
    assert "its name 'Builder' is taken by" in said


def test_a_clash_between_folders_is_the_layers_override(root: Path, home: Path) -> None:
    agent(home / ".claude/agents/team/builder.md", "builder", "Mine.")
    project = agent(root / ".claude/agents/team/builder.md", "builder", "Project's.")
    catalog = load_catalog(root, home=home)
    assert catalog.require("builder").path == project
    assert [d.source for d in catalog.overridden] == ["user"]


def test_a_project_link_out_of_its_folder_is_not_read(
    root: Path, home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    agent(outside / "spy.md", "spy", "Secret text from outside the project.")
    agent(outside / "deep" / "spy2.md", "spy2")
    agents = root / ".claude/agents"
    agents.mkdir(parents=True)
    (agents / "linked").symlink_to(outside)  # a folder
    (agents / "one.md").symlink_to(outside / "spy.md")  # a file
    (agents / "team").mkdir()
    (agents / "team" / "up").symlink_to("../../..")  # the project itself, by a relative link
    catalog = load_catalog(root, home=home)
    assert catalog.resolve("spy") is None and catalog.resolve("spy2") is None
    said = problems(root, home)
    assert "linked: subagent definition skipped: a symlink out of the folder" in said
    assert "one.md: subagent definition skipped: a symlink out of the folder" in said


def test_links_inside_the_folder_and_loops_are_read_once(root: Path, home: Path) -> None:
    agents = root / ".claude/agents"
    agent(agents / "team/builder.md", "builder")
    (agents / "alias").symlink_to("team")
    (agents / "team" / "loop").symlink_to("..")
    catalog = load_catalog(root, home=home)
    assert catalog.require("builder").path in (
        agents / "team/builder.md",
        agents / "alias/builder.md",
    )
    # reached twice through links: one definition, no clash reported
    assert "taken by" not in problems(root, home)


def test_the_users_own_links_are_followed(root: Path, home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "agents"
    agent(dotfiles / "mine.md", "mine")
    (home / ".claude" / "agents").mkdir(parents=True)
    (home / ".claude" / "agents" / "shared").symlink_to(dotfiles)
    assert load_catalog(root, home=home).resolve("mine") is not None


def test_a_fifo_or_a_folder_named_md_does_not_block_or_break_the_scan(
    root: Path, home: Path
) -> None:
    agents = root / ".claude/agents/team"
    agent(agents / "ok.md", "ok")
    os.mkfifo(agents / "stuck.md")
    (agents / "folder.md").mkdir()
    agent(agents / "folder.md" / "inner.md", "inner")
    catalog = load_catalog(root, home=home)
    assert catalog.resolve("ok") is not None and catalog.resolve("inner") is not None
    assert "stuck.md: subagent definition skipped: cannot be read" in problems(root, home)


def test_hidden_files_and_folders_are_skipped(root: Path, home: Path) -> None:
    agents = root / ".claude/agents"
    agent(agents / ".hidden/spy.md", "spy")
    agent(agents / "team/.draft.md", "draft")
    catalog = load_catalog(root, home=home)
    assert catalog.resolve("spy") is None and catalog.resolve("draft") is None


def test_a_deep_tree_stops_at_its_limit(root: Path, home: Path) -> None:
    deep = root / ".claude/agents"
    for i in range(MAX_DEPTH + 3):
        deep = deep / f"d{i}"
    agent(deep / "bottom.md", "bottom")
    agent(root / ".claude/agents/d0/near.md", "near")
    catalog = load_catalog(root, home=home)
    assert catalog.resolve("near") is not None and catalog.resolve("bottom") is None
    assert f"deeper than {MAX_DEPTH} folders" in problems(root, home)


def test_a_huge_tree_is_read_up_to_its_limit(root: Path, home: Path) -> None:
    agents = root / ".claude/agents/many"
    agents.mkdir(parents=True)
    text = "---\nname: r{i}\ndescription: d\n---\nx\n"
    for i in range(MAX_FILES + 20):
        (agents / f"r{i:04d}.md").write_text(text.format(i=i))
    catalog = load_catalog(root, home=home)
    assert len([d for d in catalog.list() if d.source == "project"]) == MAX_FILES
    assert f"the first {MAX_FILES} are read" in problems(root, home)


def test_a_huge_definition_is_refused(root: Path, home: Path) -> None:
    agent(root / ".claude/agents/team/big.md", "big", "x" * (2 << 20))
    assert load_catalog(root, home=home).resolve("big") is None
    assert "big.md: subagent definition skipped: is larger than 1 MiB" in problems(root, home)
