"""A private JupyterLab server for browser tests.

``JupyterLab(root, state_dir)`` starts ``jupyter lab`` on 127.0.0.1 (a free
port, a random token, ``--allow-root``) serving ``root``, with its own
config, data, runtime and settings directories under ``state_dir`` and the
``mewcode`` kernelspec installed there as a user installs it, with the
server extension ``install`` enables beside it (the environment scrubbed of
provider keys, as for kernel tests), and MewCode's prebuilt extension: the
installed one (``pip install``: ``share/jupyter/labextensions``) when it is
this checkout's build, else a copy of the checkout's under a
``JUPYTER_PATH`` entry; it waits (bounded) for the server to say it is
running, and on exit shuts the server and its kernels down (then kills it
if it does not stop in time).
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests._kernel import install_kernelspec, kernel_env

#: jupyter-collaboration (real-time collaboration) is installed: JupyterLab
#: runs with it only for the tests that ask (``rtc=True``)
HAS_RTC = importlib.util.find_spec("jupyter_server_ydoc") is not None

CHROMIUM = "/usr/bin/chromium"
LABEXTENSION = Path(__file__).resolve().parent.parent / "magics" / "labextension"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# JupyterLab settings for a quiet, network-free run: no news or update checks.
_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


class JupyterLab:
    def __init__(
        self,
        root: Path,
        state_dir: Path,
        *,
        start_timeout: float = 90,
        env: dict[str, str] | None = None,
        rtc: bool = False,
    ) -> None:
        self.rtc = rtc
        self.root = root
        self.state = state_dir
        #: more environment for the server and its kernels (e.g. MEWCODE_TRUST_PROJECT="")
        self.extra_env = dict(env or {})
        #: the home folder its kernels see (``~/.mewcode/config.yaml`` goes there)
        self.home = state_dir / "home"
        self.token = secrets.token_hex(16)
        self.port = _free_port()
        self._timeout = start_timeout
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._log: list[str] = []

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}?token={self.token}"

    def log(self) -> str:
        return "".join(self._log)

    def __enter__(self) -> JupyterLab:
        kernels = install_kernelspec(self.state / "prefix")
        extensions = self.state / "extensions"
        installed = Path(sys.prefix) / "share/jupyter/labextensions/mewcode-notebook"
        stamp = "source.sha256"
        if (
            not (installed / stamp).is_file()
            or (installed / stamp).read_text() != (LABEXTENSION / stamp).read_text()
        ):
            shutil.copytree(LABEXTENSION, extensions / "labextensions" / "mewcode-notebook")
        settings = self.state / "settings"
        for name, values in _SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        env = kernel_env(  # the kernels JupyterLab starts inherit it
            self.home,
            JUPYTER_CONFIG_DIR=str(self.state / "config"),
            JUPYTER_DATA_DIR=str(self.state / "data"),
            JUPYTER_RUNTIME_DIR=str(self.state / "runtime"),
            JUPYTER_PATH=os.pathsep.join([str(kernels), str(extensions)]),
            # what `install --prefix` enabled beside the kernelspec: the server
            # extension that saves MewCode's widgets as their static forms
            JUPYTER_CONFIG_PATH=str(self.state / "prefix" / "etc" / "jupyter"),
            **self.extra_env,
        )
        args = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={self.state / 'workspaces'}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
        if HAS_RTC and not self.rtc:  # jupyter-collaboration installed: on only when asked
            args.append("--YDocExtension.disable_rtc=True")
        self._proc = subprocess.Popen(
            args,
            cwd=self.root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self._wait_until_running()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            self._log.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def _wait_until_running(self) -> None:
        deadline = time.monotonic() + self._timeout
        ready = f"127.0.0.1:{self.port}/lab"
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"JupyterLab did not start in {self._timeout:g} s:\n{self.log()}"
                )
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(f"JupyterLab exited at start:\n{self.log()}")
            if ready in line:
                return

    def __exit__(self, *_: object) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:  # shuts down the kernels too
            request = urllib.request.Request(self.url("api/shutdown"), method="POST")
            urllib.request.urlopen(request, timeout=10).close()
        except OSError:
            pass
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_browser() -> None:
    """Stop a browser test module that cannot run. JupyterLab and Playwright
    are the ``browser`` extra's: missing, they fail the module. Chromium is
    a system package (never ``playwright install``): missing, the module is
    skipped with the line that installs it."""
    import importlib.util

    missing = [m for m in ("jupyterlab", "playwright") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(
            f"the browser tests need {', '.join(missing)}: pip install -e '.[browser]'",
            pytrace=False,
        )
    if not Path(CHROMIUM).exists():
        pytest.skip(
            f"the browser tests need chromium ({CHROMIUM}): apt-get install -y chromium",
            allow_module_level=True,
        )


def notebook_json(cells: list[str]) -> str:
    """An unexecuted notebook of code ``cells`` on the ``mewcode`` kernel."""
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "metadata": {},
                    "outputs": [],
                    "source": s,
                }
                for s in cells
            ],
            "metadata": {
                "kernelspec": {
                    "display_name": "MewCode (Python 3)",
                    "language": "python",
                    "name": "mewcode",
                }
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


@contextmanager
def notebook_page(
    root: Path,
    notebook: str,
    state_dir: Path,
    cells: int,
    *,
    failure: Path,
    env: dict[str, str] | None = None,
    rtc: bool = False,
) -> Iterator[Any]:
    """``root/notebook`` open in JupyterLab in chromium, its ``cells`` code
    cells shown and its kernel idle: a Playwright ``Page``. On an exception a
    screenshot is saved at ``failure`` (a .png path); JupyterLab's log (its
    kernels' too) beside it, always. ``env``: more environment for the server
    and its kernels."""
    from playwright.sync_api import expect, sync_playwright

    with JupyterLab(root, state_dir, env=env, rtc=rtc) as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(30_000)
        try:
            page.goto(lab.url(f"lab/tree/{notebook}"))
            expect(page.locator(".jp-Notebook .jp-CodeCell")).to_have_count(cells, timeout=90_000)
            page.wait_for_function(
                "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel"
                "?.status === 'idle'",
                timeout=90_000,
            )
            yield page
        except BaseException:
            failure.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(failure), full_page=True)
            failure.with_suffix(".log").write_text(lab.log())
            raise
        finally:
            browser.close()
            failure.parent.mkdir(exist_ok=True)
            failure.with_suffix(".log").write_text(lab.log())  # the server's and kernels' log


def run_cell(page: Any, index: int) -> Any:
    """Click into the ``index``-th code cell's editor and press Shift+Enter, as a
    person does; the cell's Playwright ``Locator``."""
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(index)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    return cell


def cell_completed(cell: Any, timeout: float = 30_000) -> None:
    """Wait until ``cell`` shows an execution count (``[n]:``): it finished."""
    import re

    from playwright.sync_api import expect

    expect(cell.locator(".jp-InputArea-prompt")).to_have_text(
        re.compile(r"\[\d+\]:"), timeout=timeout
    )
