# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Turn and cell numbers as the person sees them, in a real ``mewcode``
kernel: the cell shown as ``In [N]`` is cell N for ``/rewind cell N``; a
resumed session numbers its next turn on from its last one (after ``/clear``
and another session, and after a kernel restart), and that turn's changes
are reported; a role's own model is what the cell records and prices; a
role defined in a subfolder (``.claude/agents/team/``) is found."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core.pricing import estimate_cost
from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing.wire import ScriptedServer, WireReply, reply
from tests._kernel import (  # noqa: F401
    Cell,
    Kernel,
    jupyter_path,
    kernel_env,
    running_kernel,
    script,
    server,
)

OPUS = "claude-opus-4-5"
SONNET = "claude-sonnet-4-5"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer) -> Path:
    root = tmp_path_factory.mktemp("turns")
    (root / ".mewcode.yaml").write_text(
        "default_provider: claude\n"
        "providers:\n"
        "  claude:\n"
        "    protocol: anthropic\n"
        f"    model: {SONNET}\n"
        f"    base_url: {server.base_url}\n"
        "    api_key: sk-test-anthropic-0123456789\n"
        "    models:\n"
        f"      opus: {OPUS}\n"
    )
    team = root / ".claude" / "agents" / "team"
    team.mkdir(parents=True)
    (team / "builder.md").write_text(
        "---\nname: builder\ndescription: Builds things.\nmodel: opus\n---\nYou build.\n"
    )
    return root


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture
def kernel(project: Path, home: Path, jupyter_path: Path) -> Iterator[Kernel]:
    with running_kernel(project, kernel_env(home)) as k:
        yield k


def write(name: str, content: str = "written") -> WireReply:
    return reply(tool_calls=[("write_file", {"path": name, "content": content})])


def meta(cell: Cell) -> dict[str, Any]:
    assert cell.provenance, cell.text
    return cell.provenance[-1]


def test_the_cell_shown_as_in_n_is_cell_n(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    kernel.ok("a = 1")
    kernel.ok("b = 2")
    script.add(write("cell3.txt"), reply(text="Done."))
    cell = kernel.ok("%%agent --new --mode acceptEdits\nWrite cell3.txt.")
    shown = cell.reply["content"]["execution_count"]
    assert shown == 3
    assert meta(cell)["turn"] == 1
    # the checkpoint names the cell as the person saw it
    rewound = kernel.ok(f"%agent /rewind cell {shown}")
    assert f"(cell In [{shown}])" in rewound.text, rewound.text
    assert not (project / "cell3.txt").exists()
    missing = kernel.run(f"%agent /rewind cell {shown + 1}")
    assert f"No turn of this session with file changes ran in cell In [{shown + 1}]" in (
        missing.text
    )


def test_a_resumed_session_numbers_on_and_reports_its_changes(
    kernel: Kernel, project: Path, home: Path, jupyter_path: Path, script: ScriptedServer
) -> None:
    script.add(reply(text="A one."), reply(text="A two."), reply(text="B one."))
    first = meta(kernel.ok("%%agent --new\nFirst question of A."))
    session_a = first["session_id"]
    assert meta(kernel.ok("%agent Second question of A."))["turn"] == 2
    kernel.ok("%agent /clear")
    other = meta(kernel.ok("%agent A question of B."))
    assert other["session_id"] != session_a and other["turn"] == 1
    script.add(write("resumed.txt"), reply(text="Written."))
    cell = kernel.ok(f"%%agent --resume {session_a} --mode acceptEdits\nWrite resumed.txt.")
    resumed = meta(cell)
    assert resumed["session_id"] == session_a
    assert resumed["turn"] == 3
    assert resumed["files_changed"] == ["resumed.txt"]
    assert "↶ this turn changed 1 file (resumed.txt)" in cell.text
    kernel.close()
    # after a restart: /resume, then one turn
    with running_kernel(project, kernel_env(home)) as again:
        again.ok(f"%agent /resume {session_a}")
        script.add(reply(text="Back."))
        assert meta(again.ok("%agent Where were we?"))["turn"] == 4
        rewound = again.ok(f"%agent /rewind {session_a}:3")
        assert not (project / "resumed.txt").exists(), rewound.text


def test_a_role_in_a_subfolder_runs_on_its_own_model_and_is_priced_so(
    kernel: Kernel, script: ScriptedServer
) -> None:
    listed = kernel.ok("%agent /agents").text
    assert re.search(r"`builder` \| .*team/builder\.md", listed), listed
    spent = Usage(input_tokens=10_000, output_tokens=2_000)
    script.add(reply(text="Built.", usage=spent))
    cell = kernel.ok("%%agent --new --agent builder\nBuild it.")
    assert script.received[-1].body["model"] == OPUS
    recorded = meta(cell)
    assert recorded["model"] == OPUS
    expected = estimate_cost(OPUS, spent)
    assert expected is not None and expected != estimate_cost(SONNET, spent)
    assert recorded["cost_usd"] == pytest.approx(round(expected, 6))
    cost = kernel.ok("%agent /cost").text
    assert f"`{OPUS}`" in cost and f"${expected:.4f}" in cost, cost
    # the session's own model again on the next cell
    script.add(reply(text="Plain.", usage=spent))
    plain = meta(kernel.ok("%agent And now?"))
    assert plain["model"] == SONNET and script.received[-1].body["model"] == SONNET
