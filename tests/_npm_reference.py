"""The npm MCP reference servers the tests run, installed by the test run itself.

README's test command is all a fresh clone needs: the first test that starts
an npm reference server installs the pinned versions of
``tests/mcp_reference/package.json`` into that folder (``npm install
--prefix``, never globally). Parallel runs agree through an exclusive lock on
that ``package.json``: one installs, the others wait and then find the
servers there. An install counts as done when npm's own record of it (the
hidden lockfile it writes last) names the pinned versions and the servers'
commands exist, so a half-finished install by a killed run is done again.

Only node and npm themselves are a system package: without them the test is
skipped with the ``apt-get`` line that installs them.
"""

from __future__ import annotations

import fcntl
import functools
import json
import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["NPM_APT", "REFERENCE", "ensure_reference_servers", "install_reference_servers"]

REFERENCE = Path(__file__).resolve().parent / "mcp_reference"
NPM_APT = "apt-get install -y nodejs npm"
#: the commands the tests start (``node_modules/.bin/<name>``)
COMMANDS = ("mcp-server-everything", "mcp-server-filesystem")
INSTALL_TIMEOUT = 600


def _pinned(folder: Path) -> dict[str, str]:
    return dict(json.loads((folder / "package.json").read_text())["dependencies"])


def installed(folder: Path) -> bool:
    """Whether ``folder/node_modules`` holds a finished install of the pinned servers."""
    modules = folder / "node_modules"
    try:
        record = json.loads((modules / ".package-lock.json").read_text())
    except (OSError, ValueError):
        return False
    packages = record.get("packages") or {}
    for name, version in _pinned(folder).items():
        if (packages.get(f"node_modules/{name}") or {}).get("version") != version:
            return False
    return all((modules / ".bin" / command).exists() for command in COMMANDS)


def install_reference_servers(folder: Path = REFERENCE) -> bool:
    """Install the servers pinned in ``folder/package.json`` unless they are
    there already; ``True`` when this call ran npm. Skips the test without
    node or npm; fails it when npm fails."""
    if installed(folder):
        return False
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip(f"the npm MCP reference servers need node and npm ({NPM_APT})")
    with open(folder / "package.json", "rb") as pinned:
        fcntl.flock(pinned, fcntl.LOCK_EX)  # released when the file closes
        if installed(folder):  # another run installed them while this one waited
            return False
        # npm trusts its record of the tree; a stale or broken one is read from disk again
        (folder / "node_modules" / ".package-lock.json").unlink(missing_ok=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(folder), "--no-package-lock", "--no-audit",
             "--no-fund", "--loglevel=error"],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        if done.returncode != 0 or not installed(folder):
            pytest.fail(
                f"`npm install --prefix {folder}` failed (exit {done.returncode}):\n"
                f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            )
    return True


@functools.cache
def ensure_reference_servers() -> Path:
    """``tests/mcp_reference/node_modules/.bin``, installed on first use."""
    install_reference_servers(REFERENCE)
    return REFERENCE / "node_modules" / ".bin"
