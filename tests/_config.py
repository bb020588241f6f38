"""Shared helpers for the config tests: a project and a home to write config into."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """``(project root, home)``, with the home's ``.mewcode`` folder made."""
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    (home / ".mewcode").mkdir(parents=True)
    return root, home


def write(path: Path, text: str) -> Path:
    """Write dedented ``text`` to ``path``."""
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path
