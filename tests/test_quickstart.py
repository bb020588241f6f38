"""README's main job: the quickstart notebook, executed headless in the
``mewcode`` kernel by ``examples/run_notebook.py``, offline on its cassette."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests._kernel import REPO, install_kernelspec, kernel_env


def test_the_quickstart_notebook_runs_offline_and_prints_as_text(tmp_path: Path) -> None:
    jupyter_path = install_kernelspec(tmp_path / "prefix")
    env = kernel_env(tmp_path, JUPYTER_PATH=str(jupyter_path))
    notebook = REPO / "notebooks" / "quickstart.ipynb"
    before = notebook.read_bytes()
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "run_notebook.py"), str(notebook)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "Using replay of quickstart.cassette.json (offline" in out.stdout
    assert "✓ edit_file stats.py" in out.stdout
    assert "    if not xs:\n        return 0.0" in out.stdout
    assert notebook.read_bytes() == before  # the saved notebook is left as it was


def test_the_offline_demo_runs_for_a_user_with_a_personal_setup(tmp_path: Path) -> None:
    """A Claude Code user without an API key in the environment (Claude Code
    logs in another way) has skills, agents, memory, hooks and an MCP server
    of their own. The recording was made without them: the replay leaves
    them out, says so, and starts none of them, instead of failing on the
    first request."""
    home = tmp_path / "home"
    marker = tmp_path / "ran"
    skill = home / ".claude" / "skills" / "pdf"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Work with PDFs\n---\nUse pypdf.\n"
    )
    agents = home / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code\n---\nBe strict.\n"
    )
    mine = home / ".mewcode"
    mine.mkdir()
    (mine / "MEMORY.md").write_text("- I prefer tabs.\n")
    (mine / "hooks.yaml").write_text(
        "hooks:\n  - name: hello\n    event: SessionStart\n"
        f"    action: {{type: shell, command: 'touch {marker}-hook'}}\n"
    )
    (mine / "config.yaml").write_text(
        f"mcp_servers:\n  files:\n    command: sh\n    args: ['-c', 'touch {marker}-mcp; sleep 30']\n"
        f"sandbox: {{allow_write: ['{tmp_path}']}}\n"  # so the markers could be written
    )
    jupyter_path = install_kernelspec(tmp_path / "prefix")
    env = kernel_env(home, JUPYTER_PATH=str(jupyter_path))
    notebook = REPO / "notebooks" / "quickstart.ipynb"
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "run_notebook.py"), str(notebook)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "does not match" not in out.stdout
    said = next(ln for ln in out.stdout.splitlines() if "offline replay leaves out" in ln)
    for item in (
        "~/.claude/skills",
        "~/.claude/agents",
        "~/.mewcode/MEMORY.md",
        "hooks.yaml",
        "files",
    ):
        assert item in said, said
    assert "    if not xs:\n        return 0.0" in out.stdout
    assert not list(tmp_path.glob("ran-*"))  # neither the hook nor the server ran
