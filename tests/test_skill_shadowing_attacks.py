"""Attacks on skill names: ``install_skill`` (asked by a model, or by a
hostile skill's instructions) taking the name of a skill the user made by
hand, in any of the five folders, so the new one hides it (or is hidden by
it) without a word; and the catalog hiding one skill behind another of the
same name (any case, any Unicode spelling NFKC makes one) silently.

Installs run against the local fake GitHub, with real folders, links and
``SKILL.md`` files; what the session tells the user is checked as the
notices it yields."""

from __future__ import annotations

import importlib
import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.errors import SkillError
from mewcode_kernel.core.events import Notice
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.skills import INSTALL_RECORD, InstallSettings, SkillCatalog, SkillsToolset
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call
from tests._fake_github import FakeGitHub, fake_github

install_module = importlib.import_module("mewcode_kernel.core.skills.install")

REPO = "acme/shadow"

#: (folder under the project or home, how the refusal names it)
FOLDERS = [
    ("proj/.mewcode/skills", ".mewcode/skills"),
    ("proj/.claude/skills", ".claude/skills"),
    ("proj/.agents/skills", ".agents/skills"),
    ("home/.mewcode/skills", "~/.mewcode/skills"),
    ("home/.claude/skills", "~/.claude/skills"),
]

#: how a hand-made skill may spell the name an install takes ("demo")
SPELLINGS = [
    ("demo", "demo"),
    ("Demo", "Demo"),
    ("DEMO", "DEMO"),
    ("other-folder", "demo"),  # the folder's name does not matter: SKILL.md's does
    ("fullwidth", "\uff24\uff45\uff4d\uff4f"),  # ｄｅｍｏ
    ("ligature", "de\u217fo"),  # Roman numeral one thousand (NFKC: m)
]


@pytest.fixture(scope="module")
def gh() -> Iterator[FakeGitHub]:
    with fake_github() as fake:
        yield fake


@pytest.fixture
def settings(gh: FakeGitHub) -> InstallSettings:
    return InstallSettings(api_url=gh.api_url, raw_url=gh.raw_url, timeout=5)


_paths = iter(range(10_000))


def publish(gh: FakeGitHub, name: str = "demo", body: str = "Downloaded steps.") -> str:
    path = f"skills/s{next(_paths)}/{name}"
    skill_md = f"---\nname: {name}\ndescription: The downloaded one.\n---\n{body}\n"
    gh.add_tree(REPO, "main", path, {"SKILL.md": skill_md})
    return f"https://github.com/{REPO}/tree/main/{path}"


def hand_made(folder: Path, dirname: str, name: str, body: str = "My own work.") -> Path:
    d = folder / dirname
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: mine\n---\n{body}\n")
    return d


def toolset(tmp_path: Path, settings: InstallSettings) -> SkillsToolset:
    (tmp_path / "proj").mkdir(exist_ok=True)
    catalog = SkillCatalog(tmp_path / "proj", home=tmp_path / "home")
    return SkillsToolset(catalog, install_settings=settings)


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


# --- install_skill never takes a name in use ----------------------------------------------


@pytest.mark.parametrize("scope", ["user", "project"])
@pytest.mark.parametrize(("where", "label"), FOLDERS)
@pytest.mark.parametrize(("dirname", "name"), SPELLINGS)
async def test_a_hand_made_skill_anywhere_is_never_shadowed(
    gh: FakeGitHub,
    tmp_path: Path,
    settings: InstallSettings,
    scope: str,
    where: str,
    label: str,
    dirname: str,
    name: str,
) -> None:
    mine = hand_made(tmp_path / where, dirname, name)
    before = files_under(tmp_path)
    ts = toolset(tmp_path, settings)
    with pytest.raises(SkillError, match="already exists in") as caught:
        await ts.install(publish(gh), scope)  # type: ignore[arg-type]
    message = str(caught.value)
    assert f"{label}/{dirname}" in message and "was not installed by install_skill" in message
    assert str(mine) in message
    assert files_under(tmp_path) == before  # nothing written, no staging folder left
    skill = ts.catalog.get("demo")
    assert skill is not None and skill.body.strip() == "My own work."


async def test_a_skill_made_after_the_catalog_was_read_still_counts(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings
) -> None:
    ts = toolset(tmp_path, settings)  # the catalog is read now, before the skill exists
    hand_made(tmp_path / "home/.claude/skills", "demo", "demo")
    with pytest.raises(SkillError, match=r"~/\.claude/skills/demo"):
        await ts.install(publish(gh), "project")
    assert not (tmp_path / "proj/.mewcode/skills/demo").exists()


async def test_a_skill_made_during_the_download_still_counts(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_download = install_module.download

    async def download_then_race(*args: object, **kwargs: object) -> int:
        files = await real_download(*args, **kwargs)  # type: ignore[arg-type]
        hand_made(tmp_path / "proj/.claude/skills", "demo", "demo", "Written meanwhile.")
        return files

    monkeypatch.setattr(install_module, "download", download_then_race)
    ts = toolset(tmp_path, settings)
    with pytest.raises(SkillError, match=r"\.claude/skills/demo"):
        await ts.install(publish(gh), "user")
    assert not (tmp_path / "home/.mewcode/skills/demo").exists()


@pytest.mark.parametrize("dirname", ["demo", "DEMO", "De\u217fo"])
async def test_a_broken_hand_made_skill_is_known_by_its_folders_name(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings, dirname: str
) -> None:
    broken = tmp_path / "home/.claude/skills" / dirname
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("no frontmatter yet, I am still writing it\n")
    ts = toolset(tmp_path, settings)
    assert any("skipped skill" in p for p in ts.catalog.problems)
    with pytest.raises(SkillError, match="already exists"):
        await ts.install(publish(gh), "project")


async def test_a_linked_hand_made_skill_counts(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings
) -> None:
    dev = hand_made(tmp_path / "checkouts", "wip", "demo")
    (tmp_path / "home/.claude/skills").mkdir(parents=True)
    (tmp_path / "home/.claude/skills/demo").symlink_to(dev)
    ts = toolset(tmp_path, settings)
    with pytest.raises(SkillError, match=r"~/\.claude/skills/demo"):
        await ts.install(publish(gh), "user")


@pytest.mark.parametrize(("first", "second"), [("user", "project"), ("project", "user")])
async def test_an_installed_skill_is_not_shadowed_by_another_install(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings, first: str, second: str
) -> None:
    ts = toolset(tmp_path, settings)
    done = await ts.install(publish(gh), first)  # type: ignore[arg-type]
    with pytest.raises(SkillError, match=r"installed by install_skill from https://github\.com/"):
        await ts.install(publish(gh, body="Another."), second)  # type: ignore[arg-type]
    assert ts.catalog.get("demo").directory == done.directory  # type: ignore[union-attr]


@pytest.mark.parametrize("scope", ["user", "project"])
async def test_updating_the_same_installed_skill_stays_allowed(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings, scope: str
) -> None:
    ts = toolset(tmp_path, settings)
    first = await ts.install(publish(gh, body="Version one."), scope)  # type: ignore[arg-type]
    again = await ts.install(publish(gh, body="Version two."), scope)  # type: ignore[arg-type]
    assert again.replaced and again.directory == first.directory
    assert (first.directory / INSTALL_RECORD).is_file()
    skill = ts.catalog.get("demo")
    assert skill is not None and skill.body.strip() == "Version two."
    assert ts.catalog.problems == ()


async def test_a_different_name_installs_beside_hand_made_skills(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings
) -> None:
    hand_made(tmp_path / "home/.claude/skills", "demo", "other")  # folder "demo", name "other"
    hand_made(tmp_path / "proj/.claude/skills", "demo-tools", "demo-tools")
    ts = toolset(tmp_path, settings)
    done = await ts.install(publish(gh), "user")
    assert done.directory == tmp_path / "home/.mewcode/skills/demo"


async def test_the_model_is_told_where_the_existing_skill_lives(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in gh.env().items():
        monkeypatch.setenv(key, value)
    home, root = tmp_path / "home", tmp_path / "proj"
    root.mkdir()
    hand_made(home / ".claude/skills", "demo", "Demo")
    url = publish(gh)

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(allow=True)

    model = ScriptedModel(
        [reply(tool_call("install_skill", {"url": url, "scope": "project"})), reply("ok")]
    )
    config = load_config(root, home=home, env={})
    s = AgentSession(root, config=config, provider=model, home=home, approval_handler=approve)
    await collect(s.run("install the skill"))
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "~/.claude/skills/demo" in result.content
    assert "nothing was installed" in result.content
    assert not (root / ".mewcode/skills/demo").exists()


# --- the catalog says when a skill is hidden ------------------------------------------------


@pytest.mark.parametrize(
    ("winner", "loser"),
    [
        ("Demo", "demo"),
        ("DEMO", "dEmO"),
        ("\uff24\uff45\uff4d\uff4f", "demo"),  # full-width
        (unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")),
        ("\u212aeys", "keys"),  # Kelvin sign
        ("stra\u00dfe", "STRASSE"),  # sharp s case-folds to ss
    ],
)
def test_a_hidden_skill_is_reported_naming_both(tmp_path: Path, winner: str, loser: str) -> None:
    root, home = tmp_path / "proj", tmp_path / "home"
    root.mkdir()
    hand_made(root / ".claude/skills", "winner", winner, "Project's.")
    hand_made(home / ".claude/skills", "loser", loser, "User's.")
    catalog = SkillCatalog(root, home=home)
    assert len(catalog) == 1
    [problem] = catalog.problems
    assert ".claude/skills/winner" in problem and "~/.claude/skills/loser" in problem
    assert "hidden" in problem
    assert catalog.get(loser) is catalog.get(winner)


def test_invisible_characters_cannot_make_a_look_alike_name(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    hand_made(root / ".claude/skills", "a", "de\u200bmo")  # zero-width space
    hand_made(root / ".claude/skills", "b", "demo\u2060")  # word joiner
    catalog = SkillCatalog(root, home=tmp_path / "home")
    assert len(catalog) == 0
    assert all("invisible" in p for p in catalog.problems) and len(catalog.problems) == 2


async def test_the_session_tells_the_user_about_a_hidden_skill(tmp_path: Path) -> None:
    root, home = tmp_path / "proj", tmp_path / "home"
    root.mkdir()
    hand_made(root / ".agents/skills", "deploy", "Deploy", "Project's.")
    hand_made(home / ".claude/skills", "deploy", "deploy", "Mine.")
    model = ScriptedModel([reply("ok")])
    s = AgentSession(root, config=load_config(root, home=home, env={}), provider=model, home=home)
    events = await collect(s.run("hello"))
    notices = [e.message for e in events if isinstance(e, Notice)]
    hidden = [n for n in notices if "hidden" in n]
    assert len(hidden) == 1
    assert ".agents/skills/deploy" in hidden[0] and "~/.claude/skills/deploy" in hidden[0]


def test_the_install_target_through_a_link_is_the_same_skill(
    tmp_path: Path,
) -> None:
    """``.claude/skills`` linked to ``.mewcode/skills`` (one folder read twice)
    holds one skill, not a clash with itself."""
    root = tmp_path / "proj"
    hand_made(root / ".mewcode/skills", "demo", "demo")
    (root / ".claude").mkdir()
    os.symlink(root / ".mewcode/skills", root / ".claude/skills")
    catalog = SkillCatalog(root, home=tmp_path / "home")
    assert len(catalog) == 1 and catalog.problems == ()
