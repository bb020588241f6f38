# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Bad config and the offline replay, in a real ``mewcode`` kernel: one
readable line naming the file and line, and the kernel stays usable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import (  # noqa: F401
    Kernel,
    anthropic_openai_config,
    jupyter_path,
    kernel_env,
    running_kernel,
    server,
)


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory, jupyter_path: Path) -> Iterator[Kernel]:
    root = tmp_path_factory.mktemp("broken")
    (root / ".mewcode.yaml").write_text("default_provider: nowhere\n")
    with running_kernel(root, kernel_env(tmp_path_factory.mktemp("home"))) as k:
        yield k


def config_of(kernel: Kernel) -> Path:
    cwd = kernel.ok("import os; print(os.getcwd())").stdout.strip()
    return Path(cwd) / ".mewcode.yaml"


def test_an_unknown_default_provider_names_file_and_line(broken: Kernel) -> None:
    cell = broken.run("%%agent\nHello?")
    assert cell.status == "error"
    [error] = cell.errors
    assert ".mewcode.yaml:1 (default_provider): unknown provider 'nowhere'" in error["evalue"]
    assert len(error["traceback"]) == 1
    assert broken.ok("2 * 21").status == "ok"


def test_a_missing_variable_names_file_line_and_variable(broken: Kernel) -> None:
    config_of(broken).write_text(
        "default_provider: claude\nproviders:\n  claude:\n    protocol: anthropic\n"
        "    api_key: ${MEWCODE_TEST_MISSING_KEY}\n"
    )
    cell = broken.run("%agent Hello?")
    assert cell.status == "error"
    evalue = cell.errors[0]["evalue"]
    assert ".mewcode.yaml:5" in evalue and "MEWCODE_TEST_MISSING_KEY" in evalue


def test_fixing_the_config_makes_the_next_cell_work(broken: Kernel, server: ScriptedServer) -> None:
    config_of(broken).write_text(anthropic_openai_config(server.base_url, server.openai_base_url))
    server.add(reply(text="Config fixed."))
    assert broken.ok("%agent Hello?").markdown == ["Config fixed."]
    assert not server.errors


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory, jupyter_path: Path) -> Iterator[Kernel]:
    """No keys, and a project config that is not even valid YAML: the replay."""
    root = tmp_path_factory.mktemp("offline")
    (root / ".mewcode.yaml").write_text("providers:\n  claude: [oops\n")
    with running_kernel(root, kernel_env(tmp_path_factory.mktemp("home"))) as k:
        yield k


def test_without_keys_the_replay_is_used_and_config_problems_are_shown(offline: Kernel) -> None:
    cell = offline.run("%%agent\nSomething the demo recording never saw.")
    assert "⚠" in cell.stdout and ".mewcode.yaml:3: invalid YAML" in cell.stdout
    assert "Using replay of demo.cassette.json (offline" in cell.stdout
    assert cell.status == "error"  # the replay refuses a request it did not record
    assert "does not match interaction #0 of demo.cassette.json" in cell.errors[0]["evalue"]
    assert offline.ok("'still usable'").status == "ok"


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        ("%%agent --background\nWork.", "--background needs a live provider"),
        ("%%agent --model claude-opus-4-5\nHi.", "offline replay provider plays one recorded"),
        ("%agent /model gpt-4.1", "offline replay provider plays one recorded"),
    ],
)
def test_the_replay_cannot_be_switched(offline: Kernel, code: str, cause: str) -> None:
    cell = offline.run(code)
    assert cell.status == "error" and cause in cell.errors[0]["evalue"]


def test_an_untrusted_project_is_headless_noticed_and_trusted_on_request(
    tmp_path_factory: pytest.TempPathFactory, jupyter_path: Path, server: ScriptedServer
) -> None:
    """A cloned repository's settings wait for trust: a headless run says what
    was ignored (the model's provider comes from the user's own config);
    ``/trust yes`` applies them."""
    root = tmp_path_factory.mktemp("cloned")
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(
        '{"permissions": {"defaultMode": "bypassPermissions", "allow": ["Bash(touch:*)"]}}'
    )
    home = tmp_path_factory.mktemp("home")
    (home / ".mewcode").mkdir()
    (home / ".mewcode" / "config.yaml").write_text(
        anthropic_openai_config(server.base_url, server.openai_base_url)
    )
    server.add(reply(text="Hi."))
    with running_kernel(root, kernel_env(home, MEWCODE_TRUST_PROJECT="")) as k:
        cell = k.ok("%%agent\nHello?")
        assert "not trusted yet" in cell.stdout
        assert "bypassPermissions" in cell.stdout and "Bash(touch:*)" in cell.stdout
        assert "MEWCODE_TRUST_PROJECT=1" in cell.stdout
        assert "Permission mode: **default**" in k.ok("%agent /permissions").text
        trusted = k.ok("%agent /trust yes").text
        assert "Trusted this project's settings" in trusted
        assert "Permission mode: **bypassPermissions**" in k.ok("%agent /permissions").text
    assert not server.errors
