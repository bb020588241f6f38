# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Checkpoints on a real kernel with a scripted model: an agent cell's edits
are reverted from a later cell (``%agent /rewind``), a file changed since is
not clobbered, and the checkpoint outlives a kernel restart."""

from __future__ import annotations

from pathlib import Path

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import (  # noqa: F401
    Kernel,
    jupyter_path,
    kernel,
    kernel_env,
    project,
    running_kernel,
    script,
    server,
)


def edit(path: str, old: str, new: str) -> tuple[str, dict[str, str]]:
    return ("edit_file", {"path": path, "old_string": old, "new_string": new})


def test_rewind_restores_edited_and_deletes_created_files(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    (project / "stats.py").write_text("def mean(xs):\n    return sum(xs) / len(xs) + 1\n")
    script.add(
        reply(
            tool_calls=[
                edit("stats.py", "len(xs) + 1", "len(xs)"),
                ("write_file", {"path": "helpers/util.py", "content": "X = 1\n"}),
            ]
        ),
        reply(text="Fixed the mean and added a helper."),
    )
    cell = kernel.ok("%%agent --new --mode acceptEdits\nFix mean() and add a helper.")
    assert (project / "stats.py").read_text().endswith("len(xs)\n")
    assert "↶ this turn changed 2 files (stats.py, helpers/util.py)" in cell.stdout
    assert "`%agent /rewind 1`" in cell.stdout
    [meta] = cell.provenance
    assert meta["turn"] == 1 and meta["files_changed"] == ["stats.py", "helpers/util.py"]

    preview = kernel.ok("%agent /rewind 1 --dry-run")
    assert "-    return sum(xs) / len(xs)" in preview.text
    assert "+    return sum(xs) / len(xs) + 1" in preview.text
    assert (project / "helpers" / "util.py").exists()
    done = kernel.ok("%agent /rewind")
    assert "restored" in done.text and "deleted" in done.text
    assert (project / "stats.py").read_text().endswith("len(xs) + 1\n")
    assert not (project / "helpers" / "util.py").exists()


def test_rewind_refuses_to_clobber_a_file_changed_since(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    (project / "report.md").write_text("# Report\ndraft\n")
    script.add(
        reply(tool_calls=[edit("report.md", "draft", "final")]),
        reply(text="Done."),
    )
    kernel.ok("%%agent --new --mode acceptEdits\nFinalise the report.")
    (project / "report.md").write_text("# Report\nfinal\nmy own line\n")  # the person edits it
    cell = kernel.ok("%agent /rewind 1")
    assert "Nothing reverted" in cell.text and "changed since the turn" in cell.text
    assert "-my own line" in cell.text  # the diff shows what a forced revert would lose
    assert (project / "report.md").read_text() == "# Report\nfinal\nmy own line\n"
    kernel.ok("%agent /rewind 1 --force")
    assert (project / "report.md").read_text() == "# Report\ndraft\n"


def test_rewind_works_after_a_kernel_restart(
    script: ScriptedServer, project: Path, tmp_path: Path, jupyter_path: Path
) -> None:
    (project / "config.toml").write_text("debug = false\n")
    script.add(
        reply(tool_calls=[("write_file", {"path": "config.toml", "content": "debug = true\n"})]),
        reply(text="Debugging on."),
    )
    with running_kernel(project, kernel_env(tmp_path)) as k:
        cell = k.ok("%%agent --new --mode acceptEdits\nTurn debugging on.")
        label = f"{cell.provenance[0]['session_id']}:{cell.provenance[0]['turn']}"
        k.km.restart_kernel(now=True)
        k.kc.wait_for_ready(timeout=60)
        listing = k.ok("%agent /rewind list")
        assert label in listing.text
        done = k.ok(f"%agent /rewind {label}")
    assert "restored" in done.text
    assert (project / "config.toml").read_text() == "debug = false\n"
