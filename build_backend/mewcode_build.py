"""The build backend: setuptools', with one addition.

setuptools installs ``[tool.setuptools.data-files]`` from a regular wheel,
but an editable install (``pip install -e``, PEP 660) leaves them out
(its ``editable_wheel`` asks the distribution for ``has_data``, which it
does not have). MewCode's prebuilt JupyterLab extension is such data: it
must land in ``share/jupyter/labextensions/mewcode-notebook`` for JupyterLab
to find it. So ``build_editable`` adds the data files to the editable wheel
(``<name>.data/data/...``, listed in its ``RECORD``), as a regular wheel
carries them; everything else is setuptools' own.
"""

from __future__ import annotations

import base64
import csv
import glob
import hashlib
import io
import os
import tomllib
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - the PEP 517 hooks setuptools provides

__all__ = [name for name in dir(_setuptools) if not name.startswith("_")] + [
    "add_data_files",
    "build_editable",
    "data_files",
]


def data_files(root: Path) -> list[tuple[str, Path]]:
    """``(destination under the prefix, source file)`` for each data file of
    ``pyproject.toml``'s ``[tool.setuptools.data-files]`` (globs expanded)."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    table = config.get("tool", {}).get("setuptools", {}).get("data-files", {})
    found = []
    for target, patterns in table.items():
        for pattern in patterns:
            for name in sorted(glob.glob(str(root / pattern))):
                if os.path.isfile(name):
                    found.append((f"{target}/{os.path.basename(name)}", Path(name)))
    return found


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def add_data_files(wheel: Path, files: Iterable[tuple[str, Path]]) -> None:
    """Add ``files`` to ``wheel`` as data (``<dist-info name>.data/data/``) and to its RECORD."""
    with zipfile.ZipFile(wheel) as archive:
        entries = {info.filename: (info, archive.read(info)) for info in archive.infolist()}
    record_name = next(name for name in entries if name.endswith(".dist-info/RECORD"))
    data_dir = record_name.split("/")[0].removesuffix(".dist-info") + ".data/data"
    added = {f"{data_dir}/{dest}": src.read_bytes() for dest, src in files}
    record_text = entries[record_name][1].decode()
    rows = [
        row
        for row in csv.reader(io.StringIO(record_text))
        if row and row[0] not in added and row[0] != record_name
    ]
    rows += [[name, _digest(data), str(len(data))] for name, data in added.items()]
    rows.append([record_name, "", ""])  # RECORD lists itself without a hash
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, (info, data) in entries.items():
            if name != record_name and name not in added:
                archive.writestr(info, data)
        for name, data in added.items():
            archive.writestr(name, data)
        archive.writestr(record_name, out.getvalue())
    os.replace(tmp, wheel)


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    add_data_files(Path(wheel_directory) / name, data_files(Path.cwd()))
    return name
