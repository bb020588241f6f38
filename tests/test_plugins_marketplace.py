"""Marketplaces and ``/plugin``: a local marketplace (a folder, or a git
repository made here) is added, a plugin installed from it into the user's
MewCode folder under ``install_skill``'s download rules, listed, turned off
and on; bad sources are reported with the file and the reason while the
marketplace's other plugins stay installable; what an install copies may
not hold links, FIFOs or more than its quota, and only what ``/plugin`` put
there is ever replaced."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mewcode_kernel.core import open_session
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.plugins import discover_plugins
from mewcode_kernel.core.plugins.fetch import Quota, content_hash
from mewcode_kernel.core.plugins.install import add_marketplace, install_plugin
from mewcode_kernel.core.plugins.marketplace import MarketplaceError, git_source, read_marketplace
from mewcode_kernel.core.plugins.records import read_records
from mewcode_kernel.testing.wire import ScriptedServer
from tests._mcp import provider_yaml
from tests._plugins import copy_real, make_marketplace, make_plugin


@pytest.fixture(autouse=True)
def _untrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEWCODE_TRUST_PROJECT", raising=False)


def setup(tmp_path: Path, *, git: bool = False) -> tuple[Path, Path, Path]:
    root, home, market = tmp_path / "project", tmp_path / "home", tmp_path / "market"
    root.mkdir()
    (home / ".mewcode").mkdir(parents=True)
    make_plugin(market / "plugins" / "tidy", "tidy", skills={"sort": "Sort the imports."},
                commands={"fmt": "Format $ARGUMENTS."})  # fmt: skip
    copy_real(market / "plugins", "commit-commands")
    make_marketplace(
        market,
        "local",
        [
            {"name": "tidy", "source": "./plugins/tidy", "description": "Tidy things"},
            {"name": "commit-commands", "source": "./plugins/commit-commands"},
        ],
        git=git,
    )
    return root, home, market


@pytest.mark.parametrize("git", [False, True])
async def test_install_from_a_local_marketplace(tmp_path: Path, git: bool) -> None:
    root, home, market = setup(tmp_path, git=git)
    added = await add_marketplace(str(market), base=root, home=home)
    assert added.name == "local" and list(added.entries) == ["tidy", "commit-commands"]
    done = await install_plugin("tidy@local", home=home)
    target = home / ".mewcode" / "plugins" / "cache" / "local" / "tidy"
    assert done.directory == target and not done.replaced
    assert done.sha256 == content_hash(target)
    assert not (target / ".git").exists()
    record = read_records(home).plugins["tidy@local"]
    assert record["path"] == str(target) and record["sha256"] == done.sha256
    [plugin] = discover_plugins(root, home=home).plugins
    assert (plugin.name, plugin.scope, plugin.origin) == ("tidy", "user", "/plugin install")
    again = await install_plugin("tidy", home=home)  # the one marketplace offering it
    assert again.replaced and again.directory == target


async def test_a_relative_path_is_the_project_s(tmp_path: Path) -> None:
    root, home, market = setup(tmp_path)
    os.rename(market, root / "market")
    assert (await add_marketplace("market", base=root, home=home)).name == "local"


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("../outside", "climbs out of the plugin with '..'"),
        ("./plugins/../../outside", "climbs out"),
        ("/etc", "is absolute"),
        ("./link-out", "leads out of the plugin through a symlink"),
        ("./missing", "is not a folder"),
        ({"source": "npm", "package": "x"}, "source kind 'npm' is not supported"),
        ({"source": "url", "url": "http://github.com/a/b.git"}, "only https"),
        ({"source": "url", "url": "https://evil.example/a/b.git"}, "unsupported host"),
        ({"source": "url", "url": "https://u:p@github.com/a/b.git"}, "user info and ports"),
        ({"source": "url", "url": "https://github.com:8443/a/b.git"}, "user info and ports"),
        ({"source": "url", "url": "ext::sh -c touch% /tmp/pwned"}, "only https"),
        ({"source": "url", "url": "file:///etc"}, "only https"),
        ({"source": "github", "repo": "a/b/c"}, "expected https://github.com/<owner>/<repo>"),
        ({"source": "github", "repo": "../b"}, "is not a repository name"),
        ({"source": "github", "repo": "a/b", "ref": "--upload-pack=x"}, "not a branch or tag"),
        ({"source": "git-subdir", "url": "a/b", "path": "../../x"}, "must stay inside"),
        (42, "'source' must be a path or an object"),
    ],
)
async def test_a_bad_source_is_reported_and_the_rest_installs(
    tmp_path: Path, source: object, why: str
) -> None:
    root, home, market = setup(tmp_path)
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", market / "link-out")
    data = json.loads((market / ".claude-plugin" / "marketplace.json").read_text())
    data["plugins"].append({"name": "bad", "source": source})
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(data))
    added = await add_marketplace(str(market), base=root, home=home)
    [problem] = added.problems
    assert problem.startswith(str(market / ".claude-plugin" / "marketplace.json")), problem
    assert "plugins[2]" in problem and why in problem, problem
    assert "bad" not in added.entries
    with pytest.raises(MarketplaceError, match="offers no installable 'bad'"):
        await install_plugin("bad@local", home=home)
    assert (await install_plugin("tidy@local", home=home)).key == "tidy@local"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (None, "has no .claude-plugin/marketplace.json"),
        ("{nope", "is not valid JSON"),
        ('{"name": "m"}', "needs a 'plugins' list"),
        ('{"name": "../m", "plugins": []}', "'name' must be a marketplace name"),
    ],
)
async def test_a_bad_marketplace_is_refused_with_the_file_and_reason(
    tmp_path: Path, text: str | None, why: str
) -> None:
    root, home, market = setup(tmp_path)
    path = market / ".claude-plugin" / "marketplace.json"
    if text is None:
        path.unlink()
    else:
        path.write_text(text)
    with pytest.raises(MarketplaceError, match="marketplace") as caught:
        await add_marketplace(str(market), base=root, home=home)
    assert why in str(caught.value) and str(market) in str(caught.value)
    assert read_records(home).marketplaces == {}


@pytest.mark.parametrize("planted", ["inner-link", "outer-link", "fifo"])
async def test_a_plugin_holding_links_or_fifos_is_not_installed(
    tmp_path: Path, planted: str
) -> None:
    root, home, market = setup(tmp_path)
    await add_marketplace(str(market), base=root, home=home)
    first = await install_plugin("tidy@local", home=home)
    plugin = market / "plugins" / "tidy"
    if planted == "inner-link":
        os.symlink(plugin / "skills", plugin / "alias")
    elif planted == "outer-link":
        os.symlink("/etc/passwd", plugin / "skills" / "sort" / "notes.md")
    else:
        os.mkfifo(plugin / "pipe")
    with pytest.raises(MarketplaceError, match=r"symlink|not a regular file"):
        await install_plugin("tidy@local", home=home)
    assert content_hash(first.directory) == first.sha256  # the earlier install is intact
    leftovers = [p.name for p in first.directory.parent.iterdir()]
    assert leftovers == ["tidy"]


async def test_quotas_bound_an_install(tmp_path: Path) -> None:
    root, home, market = setup(tmp_path)
    await add_marketplace(str(market), base=root, home=home)
    with pytest.raises(MarketplaceError, match="more than 2 files"):
        await install_plugin("tidy@local", home=home, quota=Quota(max_files=2))
    with pytest.raises(MarketplaceError, match="larger than 0 MiB"):
        await install_plugin("tidy@local", home=home, quota=Quota(max_file_bytes=10))
    with pytest.raises(MarketplaceError, match="deeper than 1 folders"):
        await install_plugin("tidy@local", home=home, quota=Quota(max_depth=1))
    assert "tidy@local" not in read_records(home).plugins


async def test_a_folder_it_did_not_install_is_left_alone(tmp_path: Path) -> None:
    root, home, market = setup(tmp_path)
    await add_marketplace(str(market), base=root, home=home)
    mine = home / ".mewcode" / "plugins" / "cache" / "local" / "tidy"
    mine.mkdir(parents=True)
    (mine / "precious").write_text("hand-made")
    with pytest.raises(MarketplaceError, match="was not installed by /plugin"):
        await install_plugin("tidy@local", home=home)
    assert (mine / "precious").read_text() == "hand-made"


async def test_a_marketplace_name_from_another_source_is_taken(tmp_path: Path) -> None:
    root, home, market = setup(tmp_path)
    await add_marketplace(str(market), base=root, home=home)
    other = make_marketplace(tmp_path / "other", "local", [])
    with pytest.raises(MarketplaceError, match="already added from"):
        await add_marketplace(str(other), base=root, home=home)


@pytest.mark.parametrize(
    "url",
    [
        "http://github.com/a/b", "git@github.com:a/b.git", "ssh://github.com/a/b",
        "file:///tmp/x", "ext::sh -c id", "https://github.com/a/b/c",
        "https://gitlab.com/a/b", "https://github.com.evil.example/a/b",
        "https://github.com/a/b?x=1", "-c", "",
    ],
)  # fmt: skip
def test_git_urls_follow_the_skill_download_rules(url: str) -> None:
    with pytest.raises(MarketplaceError, match="refusing"):
        git_source(url)


def test_github_urls_and_the_short_form_are_accepted() -> None:
    assert git_source("anthropics/claude-plugins-official").url == (
        "https://github.com/anthropics/claude-plugins-official.git"
    )
    assert git_source("https://github.com/a/b.git", ref="v1.2").ref == "v1.2"


def test_the_real_marketplace_file_is_read(tmp_path: Path) -> None:
    """Claude's official marketplace: its local entries are folders this copy
    lacks, its remote ones GitHub or other hosts; each is kept or explained."""
    market = tmp_path / "official"
    (market / ".claude-plugin").mkdir(parents=True)
    real = Path(__file__).parent / "fixtures" / "plugins" / "claude-plugins-official"
    (market / ".claude-plugin" / "marketplace.json").write_text(
        (real / "upstream-marketplace.json").read_text()
    )
    read = read_marketplace(market)
    assert read.name == "claude-plugins-official"
    explained = ("is not a folder", "unsupported host", "is not supported here", "only https")
    assert all(any(e in p for e in explained) for p in read.problems), read.problems
    assert read.entries  # its GitHub-hosted plugins are installable


async def test_the_plugin_command_end_to_end(tmp_path: Path) -> None:
    root, home, market = setup(tmp_path)
    with ScriptedServer([]) as model:
        (home / ".mewcode" / "config.yaml").write_text(provider_yaml(model.base_url))
        async with open_session(root, home=home, env={}) as s:
            added = await run_command(s, f"/plugin marketplace add {market}")
            assert not added.error and "Added marketplace `local` (2 plugin(s))" in added.markdown
            listed = await run_command(s, "/plugin marketplace list")
            assert "`tidy`" in listed.markdown
            done = await run_command(s, "/plugin install tidy@local")
            assert not done.error and "Installed `tidy@local`" in done.markdown
            ran = await run_command(s, "/tidy:fmt main.py")
            assert ran.prompt is not None and ran.prompt.endswith("Format main.py.")
            rows = (await run_command(s, "/plugin list")).data
            assert [(r["name"], r["scope"]) for r in rows] == [("tidy", "user")]
            off = await run_command(s, "/plugin disable tidy@local")
            assert not off.error and (await run_command(s, "/plugin")).data == []
            assert (await run_command(s, "/tidy:fmt x")).error
            await run_command(s, "/plugin enable tidy@local")
            assert (await run_command(s, "/tidy:sort")).prompt is not None
            bad = await run_command(s, "/plugin install nope@local")
            assert bad.error and "offers no installable 'nope'" in bad.markdown
            assert (await run_command(s, "/plugin frobnicate")).error
