"""Where the fixtures live (recorded provider streams, real settings files):
``$MEWCODE_FIXTURES``, else ``tests/fixtures`` in this repository (copied from
the shared collection with their sources and licences: see its README.md and
MANIFEST.md files), so a fresh clone runs every test."""

from __future__ import annotations

import os
from pathlib import Path

FIXTURES = Path(os.environ.get("MEWCODE_FIXTURES") or Path(__file__).resolve().parent / "fixtures")
