"""``install_skill`` against a fake GitHub (contents API and raw files) on
127.0.0.1: what installs, and every way a download is refused (traversal,
symlinks, sizes, counts, depth, no or a bad SKILL.md, a timeout, an
interrupt, HTTP errors, foreign hosts), each time leaving the installed
skill of the same name exactly as it was and no staging folder behind."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.errors import SkillError
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.skills import (
    INSTALL_RECORD,
    InstallSettings,
    SkillCatalog,
    SkillsToolset,
    content_hash,
    install,
    parse_source,
)
from mewcode_kernel.core.skills.install import _swap
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call
from tests._fake_github import HANG, Answer, FakeGitHub, fake_github

REPO = "acme/skills"
SKILL_MD = "---\nname: demo\ndescription: The new demo.\n---\nNew instructions.\n"
MiB = 1 << 20


@pytest.fixture(scope="module")
def gh() -> Iterator[FakeGitHub]:
    with fake_github() as fake:
        yield fake


@pytest.fixture
def settings(gh: FakeGitHub) -> InstallSettings:
    return InstallSettings(api_url=gh.api_url, raw_url=gh.raw_url, timeout=5)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home whose ``~/.mewcode/skills/demo`` holds the old version."""
    old = tmp_path / "home" / ".mewcode" / "skills" / "demo"
    (old / "scripts").mkdir(parents=True)
    (old / "SKILL.md").write_text("---\nname: demo\ndescription: The old demo.\n---\nOld.\n")
    (old / "scripts" / "old.sh").write_text("echo old\n")
    (old / INSTALL_RECORD).write_text(
        '{"url": "https://github.com/acme/old", "sha256": "0", "files": 2}'
    )
    return tmp_path / "home"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def toolset(tmp_path: Path, home: Path, settings: InstallSettings) -> SkillsToolset:
    root = tmp_path / "proj"
    root.mkdir(exist_ok=True)
    return SkillsToolset(SkillCatalog(root, home=home), install_settings=settings)


_paths = iter(range(10_000))


def publish(gh: FakeGitHub, files: dict[str, bytes | str], ref: str = "main") -> tuple[str, str]:
    """Publish ``files`` at a fresh path; (its tree URL, the path)."""
    path = f"skills/t{next(_paths)}/demo"
    gh.add_tree(REPO, ref, path, files)
    return f"https://github.com/{REPO}/tree/{ref}/{path}", path


# --- what installs ---------------------------------------------------------------------------


async def test_a_tree_url_installs_replacing_the_old_skill(
    gh: FakeGitHub, tmp_path: Path, home: Path, settings: InstallSettings
) -> None:
    files = {
        "SKILL.md": SKILL_MD,
        "scripts/run.sh": "echo new\n",
        "ref/a/b/c/deep.md": "four folders down",
        "data.bin": bytes(range(256)) * 4,
    }
    url, _ = publish(gh, files)
    ts = toolset(tmp_path, home, settings)
    assert ts.catalog.get("demo").description == "The old demo."  # type: ignore[union-attr]
    done = await ts.install(url)
    target = home / ".mewcode" / "skills" / "demo"
    assert (done.name, done.directory, done.files, done.replaced) == ("demo", target, 4, True)
    got = snapshot(target)
    record = json.loads(got.pop(INSTALL_RECORD))
    assert got == {k: v.encode() if isinstance(v, str) else v for k, v in files.items()}
    assert record["url"] == url and record["files"] == 4
    assert record["sha256"] == done.sha256 == content_hash(target)
    assert [p.name for p in target.parent.iterdir()] == ["demo"]  # no staging left
    skill = ts.catalog.get("demo")  # the catalog was read again
    assert skill is not None and skill.description == "The new demo."
    assert skill.install is not None and skill.install.url == url
    assert "Skill 'demo' replaced: 4 file(s)" in ts.installed_message(done)


def test_content_hash_covers_paths_and_bytes(tmp_path: Path) -> None:
    a = tmp_path / "a"
    (a / "x").mkdir(parents=True)
    (a / "x" / "f").write_text("1")
    (a / INSTALL_RECORD).write_text("{}")
    expected = hashlib.sha256(b"x/f\0" + hashlib.sha256(b"1").digest()).hexdigest()
    assert content_hash(a) == expected
    (a / "x" / "f").rename(a / "x" / "g")
    assert content_hash(a) != expected


async def test_a_raw_skill_md_url_installs_that_file(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings
) -> None:
    gh.routes[gh.raw_path(REPO, "v2", "tools/linter/SKILL.md")] = Answer(
        body=b"---\nname: linter\n---\nLint.\n"
    )
    ts = toolset(tmp_path, tmp_path / "h", settings)
    done = await ts.install(f"https://raw.githubusercontent.com/{REPO}/v2/tools/linter/SKILL.md")
    assert done.name == "linter" and done.files == 1 and not done.replaced
    assert (tmp_path / "h/.mewcode/skills/linter/SKILL.md").read_text().endswith("Lint.\n")


@pytest.mark.parametrize(
    ("url", "repo", "path", "ref"),
    [
        ("skills.sh/acme/toolkit", "acme/toolkit", "skills/toolkit", None),
        ("https://skills.sh/acme/toolkit/2.1.0", "acme/toolkit", "skills/toolkit", None),
        ("https://www.skills.sh/acme/toolkit/fmt", "acme/toolkit", "skills/fmt", None),
        ("https://skills.sh/acme/flat/fmt", "acme/flat", "fmt", None),  # not under skills/
        ("github.com/acme/skills/blob/dev/x/fmt/SKILL.md", "acme/skills", "x/fmt", "dev"),
    ],
)
async def test_skills_sh_and_blob_urls(
    gh: FakeGitHub,
    tmp_path: Path,
    settings: InstallSettings,
    url: str,
    repo: str,
    path: str,
    ref: str | None,
) -> None:
    gh.add_tree(repo, ref, path, {"SKILL.md": "---\nname: fmt\n---\nFormat.\n"})
    done = await toolset(tmp_path, tmp_path / "h", settings).install(url)
    assert done.name == "fmt" and done.files == 1


async def test_project_scope_installs_into_the_project(
    gh: FakeGitHub, tmp_path: Path, home: Path, settings: InstallSettings
) -> None:
    url, _ = publish(gh, {"SKILL.md": SKILL_MD})
    # the user's installed "demo" would be hidden by a project one: refused (it used to
    # be installed, hiding it without a word)
    with pytest.raises(SkillError, match=r"already exists in ~/\.mewcode/skills/demo"):
        await toolset(tmp_path, home, settings).install(url, "project")
    assert snapshot(home / ".mewcode/skills/demo")["SKILL.md"].endswith(b"Old.\n")
    ts = toolset(tmp_path, tmp_path / "h", settings)
    done = await ts.install(url, "project")
    assert done.directory == tmp_path / "proj" / ".mewcode" / "skills" / "demo"
    assert ts.catalog.get("demo").source == "project"  # type: ignore[union-attr]


async def test_project_scope_refuses_a_skills_folder_leading_outside(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings
) -> None:
    url, _ = publish(gh, {"SKILL.md": SKILL_MD})
    ts = toolset(tmp_path, tmp_path / "h", settings)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, tmp_path / "proj" / ".mewcode")
    with pytest.raises(SkillError, match="leads outside the project"):
        await ts.install(url, "project")
    assert list(outside.iterdir()) == []


# --- what is refused, leaving the old skill as it was ---------------------------------------


def _tree(gh: FakeGitHub, files: dict[str, bytes | str]) -> tuple[str, str]:
    return publish(gh, {"SKILL.md": SKILL_MD, **files})


def traversal(gh: FakeGitHub, name: str, path: str | None = None):
    def make() -> str:
        url, p = _tree(gh, {"a.txt": "x"})
        entries = gh.listing(REPO, p, "main")
        evil = dict(entries[0], name=name, path=path or f"{p}/{name}")
        gh.set_listing(REPO, p, "main", [*entries, evil])
        return url

    return make


def entry_kind(gh: FakeGitHub, kind: str):
    def make() -> str:
        url, p = _tree(gh, {"a.txt": "x"})
        entries = gh.listing(REPO, p, "main")
        gh.set_listing(REPO, p, "main", [*entries, gh.entry(REPO, "main", f"{p}/link", kind)])
        return url

    return make


def lying_size(gh: FakeGitHub) -> str:
    url, p = _tree(gh, {"big.bin": b"x" * (MiB + 1)})
    entries = gh.listing(REPO, p, "main")
    gh.set_listing(REPO, p, "main", [dict(e, size=10) for e in entries])
    return url


def foreign_download(gh: FakeGitHub) -> str:
    url, p = _tree(gh, {"a.txt": "x"})
    entries = gh.listing(REPO, p, "main")
    gh.set_listing(
        REPO, p, "main",
        [dict(e, download_url="https://evil.example/a.txt") if e["name"] == "a.txt" else e for e in entries],
    )  # fmt: skip
    return url


def retarget(gh: FakeGitHub, download_url: str | None) -> str:
    url, p = _tree(gh, {"a.txt": "x"})
    entries = gh.listing(REPO, p, "main")
    gh.set_listing(
        REPO, p, "main",
        [dict(e, download_url=download_url) if e["name"] == "a.txt" else e for e in entries],
    )  # fmt: skip
    return url


def duplicate_entry(gh: FakeGitHub) -> str:
    url, p = _tree(gh, {"a.txt": "x"})
    entries = gh.listing(REPO, p, "main")
    gh.set_listing(REPO, p, "main", [*entries, *[e for e in entries if e["name"] == "a.txt"]])
    return url


def status(gh: FakeGitHub, answer: Answer) -> str:
    url, p = _tree(gh, {})
    gh.routes[gh.listing_path(REPO, p, "main")] = answer
    return url


REFUSALS = {
    "name-dotdot": (lambda gh: traversal(gh, "..")(), "names '..'"),
    "name-with-slash": (lambda gh: traversal(gh, "../../evil.txt")(), "names '../../evil.txt'"),
    "name-dot": (lambda gh: traversal(gh, ".")(), "names '.'"),
    "name-backslash": (lambda gh: traversal(gh, "..\\evil")(), "names '..\\\\evil'"),
    "path-elsewhere": (lambda gh: traversal(gh, "x.txt", "skills/other/x.txt")(), "outside the folder listed"),
    "symlink": (lambda gh: entry_kind(gh, "symlink")(), "link is a symlink"),
    "submodule": (lambda gh: entry_kind(gh, "submodule")(), "link is a submodule"),
    "submodule-listed-as-a-file": (lambda gh: retarget(gh, None), "a.txt cannot be downloaded (a submodule?)"),
    "file-over-1-MiB": (lambda gh: _tree(gh, {"big.bin": b"x" * (MiB + 1)})[0], "big.bin is larger than 1 MiB"),
    "size-that-lies": (lying_size, "big.bin is larger than 1 MiB"),
    "over-8-MiB-in-all": (lambda gh: _tree(gh, {f"f{n}.bin": b"x" * MiB for n in range(9)})[0], "larger than 8 MiB in all"),
    "65-files": (lambda gh: _tree(gh, {f"f{n:02d}.txt": "x" for n in range(64)})[0], "more than 64 files"),
    "too-deep": (lambda gh: _tree(gh, {"a/b/c/d/e/f.txt": "x"})[0], "a/b/c/d/e is nested more than 4 folders deep"),
    "no-skill-md": (lambda gh: publish(gh, {"README.md": "no skill here"})[0], "holds no SKILL.md at its top; refusing"),
    "skill-md-in-a-subfolder": (lambda gh: publish(gh, {"inner/SKILL.md": SKILL_MD})[0], "holds no SKILL.md"),
    "bad-skill-md": (lambda gh: publish(gh, {"SKILL.md": "---\nname: two words\n---\n"})[0], "SKILL.md is not valid: SKILL.md:2: the name 'two words' contains a space"),
    "download-elsewhere": (foreign_download, "would be downloaded from 'https://evil.example/a.txt'"),
    "download-userinfo-trick": (lambda gh: retarget(gh, gh.raw_url + "@evil.example/a.txt"), "@evil.example/a.txt', not GitHub"),
    "two-entries-one-name": (duplicate_entry, "cannot write a.txt: File exists"),
    "65-folders": (lambda gh: _tree(gh, {f"d{n:02d}/f.txt": "x" for n in range(32)} | {f"e{n:02d}/g/f.txt": "x" for n in range(17)})[0], "more than 64 folders"),
    "not-found": (lambda gh: f"https://github.com/{REPO}/tree/main/skills/none", "not found on GitHub: 'skills/none'"),
    "rate-limited": (lambda gh: status(gh, Answer(status=403, body=b'{"message": "API rate limit exceeded"}')), "(403: rate limit or access): {\"message\": \"API rate limit exceeded\"}"),
    "redirect": (lambda gh: status(gh, Answer(status=301, headers={"Location": "https://evil.example/"})), "redirects to https://evil.example/"),
    "server-error": (lambda gh: status(gh, Answer(status=500, body=b"boom")), "answered HTTP 500: boom"),
    "not-json": (lambda gh: status(gh, Answer(body=b"<html>")), "did not answer with a GitHub contents listing"),
    "a-file-not-a-folder": (lambda gh: status(gh, Answer(body=b'{"type": "file", "name": "x"}')), "expected a directory listing"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSALS))
async def test_refused_downloads_leave_the_old_skill_intact(
    gh: FakeGitHub, tmp_path: Path, home: Path, settings: InstallSettings, case: str
) -> None:
    make, reason = REFUSALS[case]
    url = make(gh)
    skills = home / ".mewcode" / "skills"
    before = snapshot(skills)
    ts = toolset(tmp_path, home, settings)
    with pytest.raises(SkillError) as info:
        await ts.install(url)
    assert reason in str(info.value)
    assert snapshot(skills) == before
    assert sorted(p.name for p in skills.iterdir()) == ["demo"]  # no staging folder left
    assert not (tmp_path / "evil.txt").exists() and not (home / "evil.txt").exists()
    assert ts.catalog.get("demo").description == "The old demo."  # type: ignore[union-attr]


async def test_a_download_that_takes_too_long_times_out(
    gh: FakeGitHub, tmp_path: Path, home: Path, settings: InstallSettings
) -> None:
    url = status(gh, HANG)  # type: ignore[arg-type]
    skills = home / ".mewcode" / "skills"
    before = snapshot(skills)
    quick = InstallSettings(api_url=gh.api_url, raw_url=gh.raw_url, timeout=1)
    with pytest.raises(SkillError, match=r"did not finish within 1 s; nothing was installed"):
        await toolset(tmp_path, home, quick).install(url)
    assert snapshot(skills) == before and sorted(p.name for p in skills.iterdir()) == ["demo"]


async def test_an_interrupted_install_leaves_nothing_behind(
    gh: FakeGitHub, tmp_path: Path, home: Path, settings: InstallSettings
) -> None:
    url, p = _tree(gh, {"slow.txt": "x"})
    gh.routes[gh.raw_path(REPO, "main", f"{p}/slow.txt")] = HANG
    skills = home / ".mewcode" / "skills"
    before = snapshot(skills)
    gh.hung.clear()
    task = asyncio.ensure_future(toolset(tmp_path, home, settings).install(url))
    assert await asyncio.to_thread(gh.hung.wait, 10)
    staging = [d for d in skills.iterdir() if d.name.startswith(".staging-")]
    assert len(staging) == 1  # staged beside the target: the swap is a rename on one file system
    assert os.stat(staging[0]).st_dev == os.stat(skills).st_dev
    assert (staging[0] / "SKILL.md").is_file()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert snapshot(skills) == before and sorted(p.name for p in skills.iterdir()) == ["demo"]


def test_the_swap_without_renameat2_puts_the_old_skill_back_on_failure(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    old, staging = skills / "demo", skills / ".staging-1"
    for d, text in ((old, "old"), (staging, "new")):
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(text)

    def no_space(src: Path, dst: Path) -> None:  # the staged copy cannot be moved in
        if Path(src).name.startswith(".staging-"):
            raise OSError(28, "No space left on device")
        os.rename(src, dst)

    def unavailable(a: Path, b: Path) -> bool:
        return False

    with pytest.raises(SkillError, match="No space left on device"):
        _swap(staging, old, exchange=unavailable, rename=no_space)
    assert (old / "SKILL.md").read_text() == "old" and (staging / "SKILL.md").read_text() == "new"
    assert sorted(p.name for p in skills.iterdir()) == [".staging-1", "demo"]
    assert _swap(staging, old, exchange=unavailable) is True  # the fallback works
    assert (old / "SKILL.md").read_text() == "new" and (staging / "SKILL.md").read_text() == "old"
    assert _swap(staging, old) is True  # and renameat2 swaps them back in one step
    assert (old / "SKILL.md").read_text() == "old"


async def test_a_hand_made_skill_of_the_same_name_is_never_replaced(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings
) -> None:
    skills = tmp_path / "h" / ".mewcode" / "skills"
    mine = skills / "demo"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: demo\n---\nMy own work.\n")
    url, _ = publish(gh, {"SKILL.md": SKILL_MD})
    with pytest.raises(SkillError, match="was not installed by install_skill"):
        await install(url, skills, settings)
    assert snapshot(skills) == {"demo/SKILL.md": b"---\nname: demo\n---\nMy own work.\n"}


async def test_installing_over_a_linked_skill_is_refused(
    gh: FakeGitHub, tmp_path: Path, settings: InstallSettings
) -> None:
    skills = tmp_path / "h" / ".mewcode" / "skills"
    dev = tmp_path / "dev-checkout"
    dev.mkdir()
    (dev / "SKILL.md").write_text("---\nname: demo\n---\nmine\n")
    skills.mkdir(parents=True)
    os.symlink(dev, skills / "demo")
    url, _ = publish(gh, {"SKILL.md": SKILL_MD})
    with pytest.raises(SkillError, match="is a symlink; remove it"):
        await install(url, skills, settings)
    assert (dev / "SKILL.md").read_text().endswith("mine\n")


# --- which URLs are accepted -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://gitlab.com/acme/skills/-/tree/main/demo", "unsupported host 'gitlab.com'"),
        ("https://github.com.evil.example/acme/skills/tree/main/demo", "unsupported host"),
        ("https://evil.example/github.com/acme/skills/tree/main/demo", "unsupported host 'evil.example'"),
        ("https://github.com@evil.example/acme/skills/tree/main/demo", "user info and ports"),
        ("https://github.com:8443/acme/skills/tree/main/demo", "user info and ports"),
        ("https://api.github.com/repos/acme/skills/contents/demo", "unsupported host 'api.github.com'"),
        ("file:///etc/passwd", "only https URLs"),
        ("https://github.com/acme/skills/tree/main/../../etc", "segment '..'"),
        ("https://github.com/acme/skills/tree/main/%2e%2e/x", "segment '..'"),
        ("https://github.com/acme/skills/tree/main/a%2fb", "segment 'a/b'"),
        ("https://github.com/acme/skills/tree/main/a%5cb", "segment"),
        ("https://github.com/acme/skills/pulls/3", "expected github.com/<owner>/<repo>/tree/"),
        ("https://github.com/acme", "expected github.com/<owner>/<repo>/tree/"),
        ("https://github.com/acme/skills/blob/main/README.md", "a blob URL must name a SKILL.md"),
        ("https://raw.githubusercontent.com/acme/skills/main/demo/run.sh", "a raw URL must name a SKILL.md"),
        ("https://skills.sh/acme", "expected skills.sh/<owner>/<repo>"),
        ("", "needs a URL"),
    ],
)  # fmt: skip
def test_urls_that_are_refused(url: str, reason: str) -> None:
    with pytest.raises(SkillError) as info:
        parse_source(url, InstallSettings())
    assert reason in str(info.value)


def test_urls_map_to_the_contents_api() -> None:
    s = InstallSettings(api_url="https://ghe.example/api/v3")
    src = parse_source("https://github.com/o/r/tree/v1.2/skills/my skill", s)
    assert (
        src.listing_url(src.paths[0])
        == "https://ghe.example/api/v3/repos/o/r/contents/skills/my%20skill?ref=v1.2"
    )
    whole = parse_source("github.com/o/r", s)
    assert whole.listing_url(whole.paths[0]) == "https://ghe.example/api/v3/repos/o/r/contents"


def test_settings_from_the_environment() -> None:
    s = InstallSettings.from_env(
        {
            "MEWCODE_GITHUB_API_URL": "http://127.0.0.1:9/api/",
            "MEWCODE_SKILL_INSTALL_TIMEOUT": "2.5",
        }
    )
    assert (s.api_url, s.raw_url, s.timeout) == (
        "http://127.0.0.1:9/api",
        "https://raw.githubusercontent.com",
        2.5,
    )
    assert InstallSettings.from_env({}) == InstallSettings()
    with pytest.raises(SkillError, match="MEWCODE_SKILL_INSTALL_TIMEOUT must be a number"):
        InstallSettings.from_env({"MEWCODE_SKILL_INSTALL_TIMEOUT": "soon"})
    with pytest.raises(SkillError, match="MEWCODE_GITHUB_API_URL must be an http"):
        InstallSettings.from_env({"MEWCODE_GITHUB_API_URL": "ftp://x"})


# --- through a session: a write that asks, then usable at once -------------------------------


def _session(tmp_path: Path, home: Path, model: ScriptedModel, **kw) -> AgentSession:
    root = tmp_path / "proj"
    root.mkdir(exist_ok=True)
    config = load_config(root, home=home, env={})
    return AgentSession(root, config=config, provider=model, home=home, **kw)


async def test_the_model_installs_a_skill_and_uses_it_in_the_same_session(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in gh.env().items():
        monkeypatch.setenv(key, value)
    url, _ = publish(
        gh, {"SKILL.md": "---\nname: fresh\ndescription: Just installed.\n---\nFresh steps.\n"}
    )
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(allow=True)

    model = ScriptedModel(
        [
            reply(tool_call("install_skill", {"url": url})),
            reply(tool_call("load_skill", {"name": "fresh"})),
            reply("Installed and loaded."),
            reply("Next turn."),
        ]
    )
    s = _session(tmp_path, tmp_path / "home", model, approval_handler=approve)
    await collect(s.run("install the skill and use it"))
    assert [r.tool.name for r in asked] == ["install_skill"]
    assert "install_skill changes files (default mode)" in asked[0].reason
    installed, loaded = (
        m.tool_results[0] for m in (model.requests[1].messages[-1], model.requests[2].messages[-1])
    )
    assert "Skill 'fresh' installed: 1 file(s)" in installed.content and not installed.is_error
    assert loaded.content.endswith("Fresh steps.") and not loaded.is_error
    assert "fresh" not in model.requests[2].system  # the prompt stays as the turn began
    await collect(s.run("again"))
    assert "- **fresh**: Just installed." in model.requests[3].system  # the next turn lists it
    listing = (await run_command(s, "/skills")).markdown
    record = json.loads((tmp_path / "home/.mewcode/skills/fresh" / INSTALL_RECORD).read_text())
    assert f"{url} (sha256 `{record['sha256'][:12]}`)" in listing


async def test_install_asks_and_a_headless_deny_installs_nothing(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in gh.env().items():
        monkeypatch.setenv(key, value)
    url, _ = publish(gh, {"SKILL.md": SKILL_MD})
    model = ScriptedModel([reply(tool_call("install_skill", {"url": url})), reply("ok")])
    s = _session(tmp_path, tmp_path / "home", model)
    s.headless_allow = False
    await collect(s.run("install"))
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "install_skill" in result.content
    assert not (tmp_path / "home" / ".mewcode" / "skills").exists()
