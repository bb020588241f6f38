"""Every real ``SKILL.md`` in ``tests/fixtures/skills`` (187 files from six
public repositories, copied with their MANIFEST and licences) parses, or is
rejected naming the file, the line and the reason; and what the parser reads
agrees with the MANIFEST's record of each file's frontmatter keys and with a
plain YAML reading of it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from mewcode_kernel.core.errors import SkillError
from mewcode_kernel.core.skills import SkillCatalog, parse_skill

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "skills"
FILES = sorted(FIXTURES.rglob("SKILL.md"))
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


def _manifest_keys() -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for line in (FIXTURES / "MANIFEST.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 8 and cells[1].endswith("SKILL.md"):
            keys[cells[1]] = set(filter(None, cells[7].split(",")))
    return keys


MANIFEST = _manifest_keys()


def test_the_copy_is_complete() -> None:
    assert len(FILES) == 187
    assert {str(p.relative_to(FIXTURES)) for p in FILES} == set(MANIFEST)
    for licence in (
        "obra__superpowers/LICENSE",
        "trailofbits__skills/LICENSE",
        "wshobson__agents/LICENSE",
    ):
        assert (FIXTURES / licence).is_file()  # fmt: skip


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_each_real_skill_parses_as_written(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    skill = parse_skill(text, path=path)
    front = _FRONT.match(text)
    assert front is not None
    meta = yaml.safe_load(front.group(1))
    keys = MANIFEST[str(path.relative_to(FIXTURES))]
    assert set(meta) == keys
    assert skill.name == str(meta["name"]).lower()
    assert skill.description == " ".join(str(meta["description"]).split())
    assert skill.body.strip() and skill.body.strip() in text
    assert bool(skill.allowed_tools) == bool(meta.get("allowed-tools"))
    for entry in skill.allowed_tools:
        assert entry.count("(") == entry.count(")"), entry  # Bash(git add:*) stays one entry
    assert skill.model_invocable is not meta.get("disable-model-invocation", False)
    assert skill.user_invocable is meta.get("user-invocable", True)
    assert (skill.mode, skill.fork_context, skill.warnings) == ("inline", "none", ())


BREAKAGES = [
    ("no name", lambda t: re.sub(r"(?m)^name:.*\n", "", t, count=1), "has no 'name'", 1),
    ("name with a space", lambda t: re.sub(r"(?m)^name:.*$", "name: my skill", t, count=1), "contains a space", 1),
    ("name with a slash", lambda t: re.sub(r"(?m)^name:.*$", "name: a/b", t, count=1), "'/'", 1),
    ("never closed", lambda t: t[: t.index("\n---\n", 3)] + "\n", "never closed", 1),
    ("broken YAML", lambda t: t.replace("\n---\n", "\nbad: [\n---\n", 1), "not valid YAML", 1),
    ("no frontmatter", lambda t: _FRONT.sub("", t, count=1), "no frontmatter", 1),
]  # fmt: skip


@pytest.mark.parametrize(
    ("label", "breaks", "reason", "line"), BREAKAGES, ids=[b[0] for b in BREAKAGES]
)
@pytest.mark.parametrize("path", FILES[::37], ids=lambda p: p.parent.name)
def test_broken_real_skills_are_rejected_with_file_line_and_reason(
    path: Path, label: str, breaks, reason: str, line: int
) -> None:
    broken = breaks(path.read_text(encoding="utf-8"))
    with pytest.raises(SkillError) as info:
        parse_skill(broken, path=path)
    err = info.value
    assert reason in err.reason and err.path == str(path)
    assert err.line is not None and err.line >= line
    assert str(err).startswith(f"{path}:{err.line}: ")


def test_a_catalog_of_every_real_skill(tmp_path: Path) -> None:
    """All 187 in one project folder: each is used, or its file is named with
    the reason it is not (names used by two repositories)."""
    folder = tmp_path / "project" / ".claude" / "skills"
    for n, path in enumerate(FILES):
        shutil.copytree(path.parent, folder / f"{n:03d}-{path.parent.name}")
    broken = folder / "999-broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: two words\n---\nbody\n")
    catalog = SkillCatalog(tmp_path / "project", home=tmp_path / "home")
    names = {parse_skill(p.read_text(), path=p).name for p in FILES}
    assert {s.name for s in catalog.skills()} == names
    duplicates = len(FILES) - len(names)
    assert duplicates == 7  # access, brand-guidelines, configure, frontend-design, ...
    assert len(catalog.problems) == duplicates + 1
    for problem in catalog.problems:
        assert str(folder) in problem
    assert any(
        f"{broken / 'SKILL.md'}:2: the name 'two words' contains a space" in p
        for p in catalog.problems
    )
    assert sum("takes precedence" in p for p in catalog.problems) == duplicates
