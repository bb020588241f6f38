"""A saved notebook keeps MewCode's widgets as their static forms: the server
extension's pre-save hook drops the widget view from MewCode's outputs (those
marked ``{"mewcode": {"static_form": true}}`` with HTML beside the view) and
from nothing else; malformed notebooks are saved as they are; ``install``
enables the extension beside the kernelspec (what Jupyter lists) and
``uninstall`` removes it. Real contents manager, real CLI."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.saved_notebooks import CONFIG, keep_static_forms, pre_save_hook

VIEW = "application/vnd.jupyter.widget-view+json"
MARK = {"mewcode": {"static_form": True}}


def output(data: dict[str, Any], metadata: Any = None) -> dict[str, Any]:
    return {"output_type": "display_data", "data": data, "metadata": metadata or {}}


def ours() -> dict[str, Any]:
    return output(
        {
            VIEW: {"model_id": "abc", "version_major": 2},
            "text/html": "<b>✓ Trusted</b>",
            "text/plain": "✓ Trusted",
        },
        copy.deepcopy(MARK),
    )


def notebook(*outputs: dict[str, Any]) -> dict[str, Any]:
    cell = {
        "id": "c1",
        "cell_type": "code",
        "source": "%%agent\nhi",
        "metadata": {},
        "outputs": list(outputs),
        "execution_count": 1,
    }
    return {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_our_outputs_keep_their_static_form_and_nothing_else_changes() -> None:
    theirs = output({VIEW: {"model_id": "x"}, "text/plain": "IntSlider(value=3)"})
    no_html = output({VIEW: {"model_id": "y"}, "text/plain": "x"}, copy.deepcopy(MARK))
    nb = notebook(ours(), theirs, no_html, output({"text/plain": "plain"}, copy.deepcopy(MARK)))
    before = copy.deepcopy(nb)
    assert keep_static_forms(nb) == 1
    first, *rest = nb["cells"][0]["outputs"]
    assert VIEW not in first["data"] and first["data"]["text/html"] == "<b>✓ Trusted</b>"
    assert rest == before["cells"][0]["outputs"][1:]  # another library's widget, and the rest


@pytest.mark.parametrize(
    "mark",
    [
        {"mewcode": {"static_form": "true"}},  # not the boolean
        {"mewcode": {"static_form": 1}},
        {"mewcode": True},
        {"mewcode": ["static_form"]},
        "mewcode",
        None,
    ],
)
def test_only_the_exact_mark_counts(mark: Any) -> None:
    out = ours()
    out["metadata"] = mark
    assert keep_static_forms(notebook(out)) == 0 and VIEW in out["data"]


@pytest.mark.parametrize(
    "broken",
    [
        None,
        [],
        "text",
        {"cells": None},
        {"cells": "abc"},
        {"cells": [None, 3, "x", {"outputs": None}, {"outputs": "x"}, {"outputs": [None, 1]}]},
        {
            "cells": [
                {"outputs": [{"data": None, "metadata": MARK}, {"data": [], "metadata": MARK}]}
            ]
        },
        {"cells": [{"outputs": [{"data": {VIEW: {}, "text/html": ""}, "metadata": MARK}]}]},
    ],
)
def test_a_malformed_notebook_is_saved_as_it_is(broken: Any) -> None:
    before = copy.deepcopy(broken)
    assert keep_static_forms(broken) == 0
    assert broken == before


def test_the_hook_touches_notebooks_only() -> None:
    nb = notebook(ours())
    text_file = {"type": "file", "content": json.dumps(nb)}
    pre_save_hook(text_file)
    assert VIEW in text_file["content"]
    model = {"type": "notebook", "content": nb}
    pre_save_hook(model, path="a.ipynb", contents_manager=None)
    assert VIEW not in nb["cells"][0]["outputs"][0]["data"]


def test_a_real_contents_manager_saves_the_static_form(tmp_path: Path) -> None:
    from jupyter_server.services.contents.filemanager import FileContentsManager

    manager = FileContentsManager(root_dir=str(tmp_path))
    manager.register_pre_save_hook(pre_save_hook)
    manager.save({"type": "notebook", "format": "json", "content": notebook(ours())}, "saved.ipynb")
    saved = json.loads((tmp_path / "saved.ipynb").read_text())
    [out] = saved["cells"][0]["outputs"]
    assert VIEW not in out["data"] and "✓ Trusted" in "".join(out["data"]["text/html"])


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_install_enables_the_extension_beside_the_kernelspec_and_uninstall_removes_it(
    tmp_path: Path,
) -> None:
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        # this checkout, as the kernel tests run it (not installed in the venv)
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    done = _cli("mewcode_kernel", "install", "--user", env=env)
    assert done.returncode == 0, done.stderr
    config = tmp_path / "config" / "jupyter_server_config.d" / "mewcode_kernel.json"
    assert json.loads(config.read_text()) == CONFIG
    assert str(config) in done.stdout
    assert (tmp_path / "data" / "kernels" / "mewcode" / "kernel.json").exists()
    # what Jupyter itself reads: the extension is listed, enabled and valid
    listed = _cli("jupyter", "server", "extension", "list", env=env)
    text = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)
    assert re.search(r"mewcode_kernel\.saved_notebooks\s+enabled", text), text
    assert re.search(r"mewcode_kernel\.saved_notebooks\s+OK", text), text
    gone = _cli("mewcode_kernel", "uninstall", "--user", env=env)
    assert gone.returncode == 0, gone.stderr
    assert not config.exists()

    # --prefix: beside the kernelspec under the prefix
    prefix = tmp_path / "prefix"
    assert _cli("mewcode_kernel", "install", "--prefix", str(prefix), env=env).returncode == 0
    assert (prefix / "etc" / "jupyter" / "jupyter_server_config.d" / "mewcode_kernel.json").exists()
