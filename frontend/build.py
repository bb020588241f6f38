"""Build the JupyterLab extension into ``magics/labextension`` (committed, so
a clone or a ``pip install`` needs no node), with the standard tooling:
``tsc``, then ``@jupyterlab/builder``'s ``build-labextension`` against the
installed JupyterLab's core packages. Writes ``install.json`` (how Jupyter
says the extension is managed) and ``source.sha256`` (the sources built:
``tests/test_labextension.py`` fails when they changed since).

    npm install --prefix frontend && python frontend/build.py
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jupyterlab

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "magics" / "labextension"
SOURCES = ("package.json", "tsconfig.json", "src/index.ts")
INSTALL = {
    "packageManager": "python",
    "packageName": "mewcode",
    "uninstallInstructions": "Use your Python package manager (pip) to uninstall mewcode",
}


def source_digest(root: Path = HERE) -> str:
    """SHA-256 over the extension's sources, as built."""
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    return h.hexdigest()


def main() -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    shutil.rmtree(HERE / "lib", ignore_errors=True)
    (HERE / "tsconfig.tsbuildinfo").unlink(missing_ok=True)
    subprocess.run(["npx", "tsc"], cwd=HERE, check=True)
    core = Path(jupyterlab.__file__).parent / "staging"
    builder = HERE / "node_modules/@jupyterlab/builder/lib/build-labextension.js"
    subprocess.run(["node", str(builder), "--core-path", str(core), "."], cwd=HERE, check=True)
    (OUT / "install.json").write_text(json.dumps(INSTALL, indent=2) + "\n")
    (OUT / "source.sha256").write_text(source_digest() + "\n")
    print(f"built {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
