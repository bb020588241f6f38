"""Where the fixtures live (recorded provider streams, real settings files):
``$MEWCODE_FIXTURES``, else ``tests/fixtures`` in this repository (copied from
the shared collection with their sources and licences: see its README.md and
MANIFEST.md files), so a fresh clone runs every test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURES = Path(os.environ.get("MEWCODE_FIXTURES") or Path(__file__).resolve().parent / "fixtures")


def committed(path: Path) -> Path:
    """``path``, a fixture this repository commits: one that is missing fails
    the test that needs it (it is never skipped)."""
    if not path.exists():
        pytest.fail(
            f"fixture missing: {path} (the fixtures are committed under tests/fixtures: "
            "restore them, or point MEWCODE_FIXTURES at a full copy)",
            pytrace=False,
        )
    return path
