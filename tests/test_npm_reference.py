"""The test run installs the npm MCP reference servers itself (a fresh clone
needs nothing but README's command): for real, with npm, into a copy of
``tests/mcp_reference``. Two runs at once install once and both find the
servers; a half-finished or outdated install is done again; without npm the
test is skipped with the apt line, which the skip policy allows."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._npm_reference import (
    COMMANDS,
    NPM_APT,
    REFERENCE,
    ensure_reference_servers,
    install_reference_servers,
    installed,
)
from tests._skip_policy import allowed

REPO = Path(__file__).resolve().parent.parent
CHILD = (
    "import sys; from pathlib import Path\n"
    "from tests._npm_reference import install_reference_servers\n"
    "print('installed' if install_reference_servers(Path(sys.argv[1])) else 'found', flush=True)\n"
)


def _copy_of_pins(tmp_path: Path) -> Path:
    folder = tmp_path / "mcp_reference"
    folder.mkdir()
    shutil.copy(REFERENCE / "package.json", folder / "package.json")
    return folder


def test_two_runs_at_once_install_once_and_both_find_the_servers(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip(f"needs npm ({NPM_APT})")
    folder = _copy_of_pins(tmp_path)
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(folder)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    said = []
    for run in runs:
        out, err = run.communicate(timeout=900)
        assert run.returncode == 0, err
        said.append(out.strip())
    assert sorted(said) == ["found", "installed"]  # one npm run; the other waited for it
    assert installed(folder)
    everything = folder / "node_modules" / ".bin" / COMMANDS[0]
    node = shutil.which("node")
    assert node is not None
    # the installed server really starts: it answers an initialize over stdio
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    proc = subprocess.run(
        [node, str(everything), "stdio"], input=json.dumps(request) + "\n",
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert '"serverInfo"' in proc.stdout, proc.stderr[-2000:]


@pytest.mark.parametrize("damage", ["no record", "other version", "command gone"])
def test_a_half_finished_or_outdated_install_is_done_again(tmp_path: Path, damage: str) -> None:
    ensure_reference_servers()
    folder = _copy_of_pins(tmp_path)
    shutil.copytree(REFERENCE / "node_modules", folder / "node_modules", symlinks=True)
    assert installed(folder) and install_reference_servers(folder) is False
    modules = folder / "node_modules"
    record = modules / ".package-lock.json"
    if damage == "no record":  # a run killed before npm wrote its record
        record.unlink()
    elif damage == "other version":  # package.json's pin moved on
        data = json.loads(record.read_text())
        data["packages"]["node_modules/@modelcontextprotocol/server-everything"]["version"] = "0.1"
        record.write_text(json.dumps(data))
    else:
        (modules / ".bin" / COMMANDS[1]).unlink()
    assert not installed(folder)
    assert install_reference_servers(folder) is True
    assert installed(folder)


def test_without_npm_the_test_is_skipped_with_the_apt_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _copy_of_pins(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(pytest.skip.Exception) as skipped:
        install_reference_servers(folder)
    assert NPM_APT in str(skipped.value) and allowed(str(skipped.value))
    assert not (folder / "node_modules").exists()


def test_a_failing_npm_fails_the_test_with_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _copy_of_pins(tmp_path)
    (folder / "package.json").write_text(
        json.dumps({"dependencies": {"@modelcontextprotocol/server-everything": "0.0.0-none"}})
    )
    if shutil.which("npm") is None:
        pytest.skip(f"needs npm ({NPM_APT})")
    with pytest.raises(pytest.fail.Exception) as failed:
        install_reference_servers(folder)
    assert "npm install --prefix" in str(failed.value)
