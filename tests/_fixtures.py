"""Where the shared fixtures live (recorded provider streams, real settings
files): ``$MEWCODE_FIXTURES``, or ``shared/fixtures`` beside the repository.
Tests that need them skip when they are absent."""

from __future__ import annotations

import os
from pathlib import Path

FIXTURES = Path(
    os.environ.get("MEWCODE_FIXTURES")
    or Path(__file__).resolve().parents[2] / "shared" / "fixtures"
)
