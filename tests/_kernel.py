"""Driving a real ``mewcode`` kernel over jupyter_client, for kernel-level tests.

``install_kernelspec`` puts the kernelspec under a temporary prefix (never the
user's Jupyter dirs); ``Kernel`` starts one in a project directory with a
scrubbed environment and runs cells, collecting what the front end would see.
Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import queue
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import KernelManager

from mewcode_kernel.testing import install_kernelspec, scrubbed_env
from mewcode_kernel.testing.wire import ScriptedServer

REPO = Path(__file__).resolve().parents[1]


def kernel_env(home: Path, **extra: str) -> dict[str, str]:
    env = scrubbed_env(HOME=str(home))  # no user config from the developer's home
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    # the tests' projects are the user's own (a provider on a local test server);
    # a test of the trust card passes MEWCODE_TRUST_PROJECT="" to start untrusted
    env["MEWCODE_TRUST_PROJECT"] = "1"
    env.update(extra)
    return env


def anthropic_openai_config(base_url: str, openai_base_url: str, *, default: str = "claude") -> str:
    """A ``.mewcode.yaml`` with an Anthropic and an OpenAI provider on a ScriptedServer."""
    return (
        f"default_provider: {default}\n"
        "providers:\n"
        "  claude:\n"
        "    protocol: anthropic\n"
        "    model: claude-sonnet-4-5\n"
        f"    base_url: {base_url}\n"
        "    api_key: sk-test-anthropic-0123456789\n"
        "  gpt:\n"
        "    protocol: openai\n"
        "    model: gpt-4.1\n"
        f"    base_url: {openai_base_url}\n"
        "    api_key: sk-test-openai-0123456789\n"
    )


@dataclass
class Cell:
    """What one execution produced."""

    reply: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def status(self) -> str:
        return self.reply["content"]["status"]

    @property
    def outputs(self) -> list[tuple[str, dict[str, Any]]]:
        return [
            (m["msg_type"], m["content"])
            for m in self.messages
            if m["msg_type"] in {"stream", "display_data", "execute_result", "error"}
        ]

    @property
    def stdout(self) -> str:
        return "".join(
            c["text"] for t, c in self.outputs if t == "stream" and c["name"] == "stdout"
        )

    @property
    def markdown(self) -> list[str]:
        return [
            c["data"]["text/markdown"]
            for t, c in self.outputs
            if t in {"display_data", "execute_result"} and "text/markdown" in c["data"]
        ]

    @property
    def text(self) -> str:
        """Everything a person reads: stream text, Markdown and error lines."""
        parts = [self.stdout, *self.markdown, *(" ".join(c["traceback"]) for c in self.errors)]
        return "\n".join(parts)

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [c for t, c in self.outputs if t == "error"]

    @property
    def provenance(self) -> list[dict[str, Any]]:
        return [
            c["metadata"]["mewcode"]
            for t, c in self.outputs
            if t == "display_data" and "mewcode" in c.get("metadata", {})
        ]

    @property
    def raw(self) -> str:
        return json.dumps(self.messages, default=str)


class Kernel:
    """A ``mewcode`` kernel (or another kernelspec) running in ``cwd``.

    ``widget_manager``: the client behaves as JupyterLab's notebook does when
    it connects, asking for the kernel's widgets (``open_widget_manager``),
    so live cells are drawn with widgets; without it the client is a front
    end with no widgets (``jupyter console``)."""

    def __init__(
        self,
        cwd: Path,
        env: Mapping[str, str],
        *,
        kernel_name: str = "mewcode",
        widget_manager: bool = True,
    ) -> None:
        self.km = KernelManager(kernel_name=kernel_name)
        self.km.start_kernel(cwd=str(cwd), env=dict(env))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        if widget_manager:
            self.open_widget_manager()
        #: iopub messages of other executions, read while waiting for one (e.g. the
        #: later output of a background turn, whose cell has already finished).
        self.others: list[dict[str, Any]] = []

    def open_widget_manager(self) -> None:
        """What ipywidgets' manager in JupyterLab sends when it connects: it
        opens the ``jupyter.widget.control`` comm to fetch the kernel's widgets."""
        content = {"comm_id": uuid.uuid4().hex, "target_name": "jupyter.widget.control", "data": {}}
        msg = self.kc.session.msg("comm_open", content, metadata={"version": "1.0.0"})
        self.kc.shell_channel.send(msg)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def execute(self, code: str, *, allow_stdin: bool = False) -> str:
        return self.kc.execute(code, allow_stdin=allow_stdin, stop_on_error=False)

    def collect(
        self,
        msg_id: str,
        *,
        timeout: float = 60,
        on_message: Callable[[dict[str, Any]], None] | None = None,
    ) -> Cell:
        """Gather the iopub messages of ``msg_id`` until idle, then its reply."""
        start = time.monotonic()
        cell = Cell(reply={})
        deadline = start + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"cell {msg_id} did not finish within {timeout} s")
            try:
                msg = self.kc.get_iopub_msg(timeout=min(remaining, 1.0))
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                self.others.append(msg)
                continue
            if on_message is not None:
                on_message(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            cell.messages.append(msg)
        cell.elapsed = time.monotonic() - start
        while True:
            reply = self.kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 1.0))
            if reply["parent_header"].get("msg_id") == msg_id:
                cell.reply = reply
                return cell

    def run(self, code: str, *, timeout: float = 60, allow_stdin: bool = False) -> Cell:
        return self.collect(self.execute(code, allow_stdin=allow_stdin), timeout=timeout)

    def ok(self, code: str, **kwargs: Any) -> Cell:
        """Run ``code`` and assert it succeeded."""
        cell = self.run(code, **kwargs)
        assert cell.status == "ok", cell.text
        return cell

    def wait_for(
        self, msg_id: str, predicate: Callable[[dict[str, Any]], bool], *, timeout: float = 30
    ) -> list[dict[str, Any]]:
        """Read iopub messages of ``msg_id`` until one satisfies ``predicate``;
        returns the messages read (they are not seen again by ``collect``)."""
        seen: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                self.others.append(msg)
                continue
            seen.append(msg)
            if predicate(msg):
                return seen
        raise TimeoutError(f"no matching message for {msg_id} within {timeout} s: {seen!r:.2000}")

    def stdin_request(self, *, timeout: float = 30) -> dict[str, Any]:
        """The next ``input_request`` sent on the stdin channel."""
        msg = self.kc.get_stdin_msg(timeout=timeout)
        assert msg["msg_type"] == "input_request", msg
        return msg


@contextmanager
def running_kernel(cwd: Path, env: Mapping[str, str], **kwargs: Any) -> Iterator[Kernel]:
    kernel = Kernel(cwd, env, **kwargs)
    try:
        yield kernel
    finally:
        kernel.close()


# --- fixtures: a module's kernel, project and scripted server ---------------------------
# Import them into a test module: ``from tests._kernel import kernel, project, script, server``.


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    """The module's scripted model server (Anthropic and OpenAI wire formats)."""
    with ScriptedServer() as s:
        yield s


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer) -> Path:
    """A project directory whose ``.mewcode.yaml`` points at ``server``."""
    root = tmp_path_factory.mktemp("project")
    (root / ".mewcode.yaml").write_text(
        anthropic_openai_config(server.base_url, server.openai_base_url)
    )
    (root / "notes.txt").write_text("hello from the notes\n")
    return root


@pytest.fixture(scope="module")
def jupyter_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``JUPYTER_PATH`` holding a freshly installed ``mewcode`` kernelspec."""
    path = install_kernelspec(tmp_path_factory.mktemp("jupyter-prefix"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(path))
        yield path


@pytest.fixture(scope="module")
def kernel(
    tmp_path_factory: pytest.TempPathFactory, project: Path, jupyter_path: Path
) -> Iterator[Kernel]:
    """The module's ``mewcode`` kernel, running in ``project``."""
    with running_kernel(project, kernel_env(tmp_path_factory.mktemp("home"))) as k:
        yield k


@pytest.fixture
def script(server: ScriptedServer) -> Iterator[ScriptedServer]:
    """The server, checked after the test: every step used, no unexpected request."""
    yield server
    assert server.remaining == 0, f"{server.remaining} scripted step(s) unused"
    assert not server.errors, server.errors
