"""``jupyter console`` on the ``mewcode`` kernel, typed into a real terminal
(pexpect): a multi-line ``%%agent`` cell (Enter after the magic waits for
the prompt, a blank line runs it), an approval asked and answered at the
terminal without any setting, and the file written."""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from mewcode_kernel.testing import install_kernelspec
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import anthropic_openai_config, kernel_env

CONSOLE = Path(sys.executable).parent / "jupyter-console"
WAIT = 120  # the first agent cell of a cold kernel imports the agent core
_ESC = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"


def shown(text: str) -> str:
    """A pattern for ``text`` as the terminal draws it, colour codes anywhere."""
    return _ESC + _ESC.join(re.escape(ch) for ch in text)


IN_1, IN_2, MORE = shown("In [1]: "), shown("In [2]: "), shown("...: ")


@pytest.fixture
def place() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="mewcode-console-"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_multi_line_agent_cell_and_an_approval_in_jupyter_console(place: Path) -> None:
    assert CONSOLE.exists(), "jupyter_console is in the test extra"
    project = place / "project"
    project.mkdir()
    steps = [
        reply(tool_calls=[("write_file", {"path": "console.txt", "content": "from the agent"})]),
        reply(text="Wrote console.txt for you."),
    ]
    with ScriptedServer(steps) as server:
        (project / ".mewcode.yaml").write_text(
            anthropic_openai_config(server.base_url, server.openai_base_url)
        )
        env = kernel_env(place / "home", JUPYTER_PATH=str(install_kernelspec(place / "prefix")))
        env.update(TERM="xterm-256color", COLUMNS="120", LINES="40")
        env.pop("MEWCODE_RENDERER", None)
        term = pexpect.spawn(
            str(CONSOLE),
            # jupyter_console gives up on the kernel's is_complete after 1 s and
            # then a late status "idle" of that request ends its wait for the
            # approval's input request: a hang on a loaded machine, not ours.
            [
                "--kernel",
                "mewcode",
                "--no-confirm-exit",
                "--ZMQTerminalInteractiveShell.kernel_is_complete_timeout=60",
            ],
            cwd=str(project),
            env=env,
            encoding="utf-8",
            timeout=WAIT,
            dimensions=(40, 120),
        )
        term.logfile_read = seen = io.StringIO()
        try:
            term.expect(IN_1)
            term.send("%%agent\r")
            term.expect(MORE)  # the magic alone is not a whole cell: it waits
            term.send("Write console.txt\r")
            term.expect(MORE)
            term.send("with a short line.\r")
            term.expect(MORE)
            term.send("\r")  # a blank line ends the cell
            if term.expect([MORE, shown("Allow write_file")]) == 0:
                term.send("\r")  # IPython's cell magics end at a second blank line
                term.expect(shown("Allow write_file"))
            term.expect(shown("(or a note for the model): "))
            term.sendline("y")
            term.expect(shown("Wrote console.txt for you."))
            term.expect(IN_2)
            transcript = term.before or ""
            term.sendline("exit")
            term.expect(pexpect.EOF)
        except pexpect.TIMEOUT:
            shown_text = re.sub(_ESC, "", seen.getvalue())[-3000:]
            pytest.fail(f"{len(server.requests)} request(s); the terminal showed: {shown_text}")
        finally:
            term.close(force=True)
        assert not server.errors, server.errors
        blocks = server.requests[0]["messages"][0]["content"]
        said = " ".join(" ".join(b.get("text", "").split()) for b in blocks)
    assert "Write console.txt with a short line." in said  # the whole multi-line body
    assert (project / "console.txt").read_text() == "from the agent"
    assert "CardWidget" not in transcript and "Widget object" not in transcript
    assert os.path.exists(project / ".mewcode" / "sessions")
