"""README's main job: the demo runs offline on the bundled cassette. This also
catches drift: a changed system prompt or tool schema no longer matches the
recording, and the replay refuses it (re-record with
examples/record_demo_cassette.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_demo_runs_offline_on_the_bundled_replay(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["HOME"] = str(tmp_path)  # no user config
    env["TMPDIR"] = str(tmp_path)
    # this checkout's code, whatever an installed (editable) copy points at
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "demo.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "replay of demo.cassette.json (offline" in out.stdout
    assert "0.0 2.0" in out.stdout
    [project] = list(tmp_path.glob("mewcode-demo-*"))
    assert "if not xs:\n        return 0.0" in (project / "stats.py").read_text()
    assert list((project / ".mewcode" / "sessions").iterdir())
