# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""A newcomer's first cells in a real ``mewcode`` kernel: slash-command cells
run as commands, README's sample config without ANTHROPIC_API_KEY keeps every
other provider and command working, the offline replay says what to set, and
the first visible output comes at once."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import (  # noqa: F401
    Kernel,
    jupyter_path,
    kernel_env,
    running_kernel,
    server,
)

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_config(base_url: str) -> str:
    """The sample ``.mewcode.yaml`` from README.md, its local server pointed at ``base_url``."""
    text = README.read_text()
    start = text.index("```yaml\ndefault_provider: claude")
    sample = text[start + len("```yaml\n") : text.index("```", start + 7)]
    assert "api_key: ${ANTHROPIC_API_KEY}" in sample
    return sample.replace("http://127.0.0.1:8000/v1", base_url)


@pytest.fixture(scope="module")
def newcomer(
    tmp_path_factory: pytest.TempPathFactory, jupyter_path: Path, server: ScriptedServer
) -> Iterator[Kernel]:
    root = tmp_path_factory.mktemp("newcomer")
    (root / ".mewcode.yaml").write_text(readme_config(server.openai_base_url))
    with running_kernel(root, kernel_env(tmp_path_factory.mktemp("home"))) as k:
        yield k


def test_a_slash_command_cell_runs_the_command(newcomer: Kernel) -> None:
    help_cell = newcomer.ok("/help")
    assert "`/clear`" in help_cell.markdown[0]
    assert "Help on" not in help_cell.text  # not Python's help()
    cost = newcomer.ok("/cost")
    assert cost.markdown and not cost.errors
    # plain Python still runs, and a division is not a command
    assert newcomer.ok("x = 6\nprint(x / 2)").stdout == "3.0\n"


def test_an_unset_key_is_reported_when_its_provider_is_used(
    newcomer: Kernel, server: ScriptedServer
) -> None:
    cell = newcomer.run("%%agent\nHello?")
    assert cell.status == "error"
    evalue = cell.errors[0]["evalue"]
    assert "${ANTHROPIC_API_KEY}" in evalue and ".mewcode.yaml:6" in evalue
    server.add(reply(text="Local model here."))
    local = newcomer.ok("%%agent --provider local\nHello?")
    assert local.markdown[-1] == "Local model here."
    assert newcomer.ok("/model").markdown


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory, jupyter_path: Path) -> Iterator[Kernel]:
    root = tmp_path_factory.mktemp("offline")
    with running_kernel(root, kernel_env(tmp_path_factory.mktemp("home"))) as k:
        yield k


def test_the_offline_replay_says_what_to_set_instead(offline: Kernel) -> None:
    cell = offline.run("%%agent\nRefactor my whole project.")
    assert cell.status == "error"
    evalue = cell.errors[0]["evalue"]
    assert "does not match interaction #0 of demo.cassette.json" in evalue
    assert "can only play the task that was recorded" in evalue
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", ".mewcode.yaml"):
        assert name in evalue


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mewcode_kernel", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_the_launcher_has_its_own_help_and_refuses_unknown_commands() -> None:
    shown = _cli("--help")
    assert shown.returncode == 0
    for word in ("install", "uninstall", "-f CONNECTION_FILE", "--sys-prefix"):
        assert word in shown.stdout
    typo = _cli("instal")  # used to start a kernel silently
    assert typo.returncode == 2
    assert "unknown command 'instal'; did you mean 'install'?" in typo.stderr
