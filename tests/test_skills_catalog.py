"""The skill catalog: five folders, project over user, case-insensitive names,
problems reported, immutable values shared by readers, and ``load`` reading
the file again; plus what is rendered from it (the system prompt's list, a
skill's instructions, the active-skills block)."""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

import pytest

from mewcode_kernel.core.errors import SkillError
from mewcode_kernel.core.skills import (
    SkillCatalog,
    active_skills_block,
    catalog_section,
    render_body,
    resolve_tools,
)
from mewcode_kernel.core.tools import builtin_tools


def write_skill(folder: Path, dirname: str, front: str, body: str = "Do the thing.") -> Path:
    d = folder / dirname
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\n{front}\n---\n{body}\n")
    return d


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "proj", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    return root, home


def test_all_five_folders_are_read(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    for folder, name in [
        (root / ".mewcode/skills", "p-mewcode"),
        (root / ".claude/skills", "p-claude"),
        (root / ".agents/skills", "p-agents"),
        (home / ".mewcode/skills", "u-mewcode"),
        (home / ".claude/skills", "u-claude"),
    ]:
        write_skill(folder, name, f"name: {name}\ndescription: from {folder}")
    catalog = SkillCatalog(root, home=home)
    got = {s.name: (s.source, s.origin, s.display_dir) for s in catalog.skills()}
    assert got == {
        "p-agents": ("project", ".agents/skills", ".agents/skills/p-agents"),
        "p-claude": ("project", ".claude/skills", ".claude/skills/p-claude"),
        "p-mewcode": ("project", ".mewcode/skills", ".mewcode/skills/p-mewcode"),
        "u-claude": ("user", "~/.claude/skills", "~/.claude/skills/u-claude"),
        "u-mewcode": ("user", "~/.mewcode/skills", "~/.mewcode/skills/u-mewcode"),
    }
    assert [s.name for s in catalog.skills()] == sorted(got)
    assert catalog.problems == ()


def test_project_overrides_user_and_the_loser_is_reported(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    write_skill(home / ".mewcode/skills", "deploy", "name: deploy\ndescription: user's")
    write_skill(root / ".claude/skills", "deploy", "name: Deploy\ndescription: project's")
    write_skill(root / ".agents/skills", "deploy2", "name: DEPLOY\ndescription: agents'")
    catalog = SkillCatalog(root, home=home)
    assert catalog.get("deploy").description == "project's"  # type: ignore[union-attr]
    assert len(catalog.problems) == 2
    assert all("takes precedence" in p and ".claude/skills/deploy" in p for p in catalog.problems)


def test_lookup_is_case_insensitive(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    write_skill(root / ".claude/skills", "x", "name: Code-Review")
    catalog = SkillCatalog(root, home=home)
    assert catalog.get("CODE-review") is catalog.get("code-review") is not None
    assert "Code-Review" in catalog and "other" not in catalog


def test_only_directories_holding_skill_md_count(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    folder = root / ".mewcode/skills"
    write_skill(folder, "real", "name: real")
    (folder / "loose.md").write_text("---\nname: loose\n---\n")
    (folder / "empty-dir").mkdir()
    write_skill(folder, ".staging-abc", "name: half-installed")
    (folder / "notes").mkdir()
    (folder / "notes" / "skill.md").write_text("---\nname: lower\n---\n")
    assert [s.name for s in SkillCatalog(root, home=home).skills()] == ["real"]


def test_a_skill_linked_into_claude_skills_is_not_a_duplicate(dirs: tuple[Path, Path]) -> None:
    # the common layout: the skill lives in .agents/skills, .claude/skills links to it
    root, home = dirs
    real = write_skill(root / ".agents/skills", "lint", "name: lint")
    (root / ".claude/skills").mkdir(parents=True)
    os.symlink(real, root / ".claude/skills/lint")
    catalog = SkillCatalog(root, home=home)
    assert [s.name for s in catalog.skills()] == ["lint"] and catalog.problems == ()


def test_broken_files_are_skipped_with_file_line_and_reason(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    folder = root / ".claude/skills"
    write_skill(folder, "good", "name: good")
    write_skill(folder, "spaced", "description: d\nname: has space")
    (folder / "binary").mkdir()
    (folder / "binary" / "SKILL.md").write_bytes(b"---\nname: b\n---\n\xff\xfe")
    big = folder / "big"
    big.mkdir()
    (big / "SKILL.md").write_text("---\nname: big\n---\n" + "x" * (1 << 20))
    write_skill(folder, "warned", "name: warned\nmode: turbo")
    catalog = SkillCatalog(root, home=home)
    assert [s.name for s in catalog.skills()] == ["good", "warned"]
    problems = "\n".join(catalog.problems)
    assert f"{folder / 'spaced' / 'SKILL.md'}:3: the name 'has space' contains a space" in problems
    assert f"{folder / 'binary' / 'SKILL.md'}: is not UTF-8" in problems
    assert f"{folder / 'big' / 'SKILL.md'}: is larger than 1 MiB" in problems
    assert f"{folder / 'warned' / 'SKILL.md'}: mode 'turbo' is not inline or fork" in problems


def test_skills_are_immutable_values_and_load_never_changes_the_catalog(
    dirs: tuple[Path, Path],
) -> None:
    root, home = dirs
    d = write_skill(root / ".claude/skills", "s", "name: s\ndescription: one", body="Version 1.")
    catalog = SkillCatalog(root, home=home)
    before = catalog.get("s")
    assert before is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        before.body = "changed"  # type: ignore[misc]
    (d / "SKILL.md").write_text("---\nname: s\ndescription: two\n---\nVersion 2.\n")
    fresh, note = catalog.load("S")
    assert (fresh.body, fresh.description, note) == ("Version 2.", "two", None)
    assert catalog.get("s") is before and before.body == "Version 1."  # readers keep their copy


def test_load_falls_back_to_the_copy_read_at_start(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    d = write_skill(root / ".claude/skills", "s", "name: s", body="Original.")
    catalog = SkillCatalog(root, home=home)
    (d / "SKILL.md").write_text("---\nname: s\nbad: [\n---\n")
    skill, note = catalog.load("s")
    assert skill.body == "Original." and note is not None and "not valid YAML" in note
    (d / "SKILL.md").write_text("---\nname: renamed\n---\nNew.\n")
    skill, note = catalog.load("s")
    assert skill.body == "Original." and "now names the skill 'renamed'" in (note or "")
    with pytest.raises(SkillError, match=r"no skill called 'nope' \(available: s\)"):
        catalog.load("nope")


def test_reload_swaps_the_snapshot_while_readers_read(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    for n in range(20):
        write_skill(root / ".claude/skills", f"s{n}", f"name: s{n}")
    catalog = SkillCatalog(root, home=home)
    failures: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(200):
                listed = catalog.skills()
                assert len(listed) == 20 and all(catalog.get(s.name) for s in listed)
        except BaseException as exc:
            failures.append(exc)

    readers = [threading.Thread(target=read) for _ in range(3)]
    for t in readers:
        t.start()
    for _ in range(10):
        catalog.reload()
    for t in readers:
        t.join(timeout=30)
    assert not failures and catalog.version == 10


# --- rendering -----------------------------------------------------------------------------


def test_the_catalog_section_is_sorted_byte_stable_and_lists_only_model_invocable(
    dirs: tuple[Path, Path],
) -> None:
    root, home = dirs
    write_skill(root / ".claude/skills", "z", "name: zeta\ndescription: >\n  Last\n  one.")
    write_skill(home / ".mewcode/skills", "a", "name: alpha\ndescription: First.")
    write_skill(
        root / ".claude/skills", "m", "name: manual\ndescription: x\ndisable-model-invocation: true"
    )
    write_skill(root / ".claude/skills", "long", "name: long\ndescription: " + "word " * 400)
    section = catalog_section(SkillCatalog(root, home=home).skills())
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert lines[0] == "- **alpha**: First." and lines[-1] == "- **zeta**: Last one."
    assert "manual" not in section and "load_skill(name, args)" in section
    assert len(lines[1]) < 1100 and lines[1].endswith("…")
    assert section == catalog_section(SkillCatalog(root, home=home).skills())
    assert catalog_section([]) == ""


def test_render_body_replaces_arguments_or_appends_the_request(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    write_skill(
        root / ".claude/skills", "a", "name: a", body="Fix $ARGUMENTS now; then $ARGUMENTS."
    )
    write_skill(root / ".claude/skills", "b", "name: b", body="Review the code.")
    write_skill(root / ".claude/skills", "c", "name: c", body="Run ${CLAUDE_SKILL_DIR}/run.sh")
    catalog = SkillCatalog(root, home=home)
    a, b, c = (catalog.get(n) for n in "abc")
    assert render_body(a, "bug 7").endswith("Fix bug 7 now; then bug 7.")  # type: ignore[arg-type]
    assert render_body(a, "").endswith("Fix  now; then .")  # type: ignore[arg-type]
    assert render_body(b, "utils.py").endswith("Review the code.\n\n## User Request\n\nutils.py")  # type: ignore[arg-type]
    assert render_body(b, "  ").endswith("Review the code.")  # type: ignore[arg-type]
    assert render_body(c).endswith("Run .claude/skills/c/run.sh")  # type: ignore[arg-type]
    assert render_body(b).startswith("Skill directory: .claude/skills/b ")  # type: ignore[arg-type]


def test_inline_skills_say_which_tools_they_mean_to_use(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    write_skill(root / ".claude/skills", "i", "name: i\nallowed-tools: Bash(git *), Edit, WebFetch")
    write_skill(root / ".claude/skills", "f", "name: f\nmode: fork\nallowed-tools: Bash")
    catalog = SkillCatalog(root, home=home)
    body = render_body(catalog.get("i"), tools=builtin_tools())  # type: ignore[arg-type]
    assert (
        "This skill is designed to use only these tools: Bash(git *), Edit, WebFetch "
        "(here: write_file, edit_file, bash). Prefer them over other tools when possible."
    ) in body
    assert "designed to use only" not in render_body(catalog.get("f"), tools=builtin_tools())  # type: ignore[arg-type]


def test_resolve_tools_maps_claude_code_names() -> None:
    names, unknown = resolve_tools(["Read", "Bash(ls *)", "bash", "TodoWrite"], builtin_tools())
    assert names == ["read_file", "glob", "grep", "bash"] and unknown == ["TodoWrite"]


def test_the_active_block_keeps_first_activation_order() -> None:
    block = active_skills_block({"b": "Bee.", "a": "Ay."})
    assert block.startswith("<active-skills>") and block.endswith("</active-skills>")
    assert block.index("## Skill: b") < block.index("## Skill: a")
    assert active_skills_block({}) == ""
