"""Attacks on the notebook tools, and the bad inputs they must survive.

Each bad notebook (not JSON, truncated, not a notebook, damaged cells,
duplicate ids, not a file), an unknown cell id, a cell id of another
notebook, 10,000 cells, a 50 MB output and malformed image payloads give
the model a clear error or a bounded result, never a crashed turn, and the
notebook is left as it was. Rules hold whatever the path's spelling
(``NotebookEdit``, the ``Edit``/``Read`` rules that cover the ``.ipynb``,
links, ``..``, absolute paths); writes outside the project and to protected
paths ask (and the headless policy never allows them); plan mode changes
nothing; a cell is run only as the model read it and judged by its code
(``RunPython`` rules); secrets in cells stay masked and are never written
back as their mask.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from pathlib import Path

import pytest

from tests._notebook_session import shell, turn
from tests._notebooks import code, image_output, markdown, notebook, png_b64

pytestmark = pytest.mark.asyncio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "nb.ipynb").write_text(
        notebook([markdown("intro", "# Title"), code("calc", "x = 1\nprint(x)\n")])
    )
    return project


GOOD = notebook([code("a", "x = 1\n")])
BAD_FILES = {
    "not JSON": b"{this is not json",
    "truncated": GOOD[: len(GOOD) // 2].encode(),
    "not a notebook": b'{"hello": "world"}',
    "nbformat 3": json.dumps({"cells": [], "nbformat": 3}).encode(),
    "a damaged cell": json.dumps({"cells": [{"cell_type": "x"}], "nbformat": 4}).encode(),
    "a source that is not text": json.dumps(
        {"cells": [{"cell_type": "code", "source": [1, 2]}], "nbformat": 4}
    ).encode(),
    "two cells with one id": notebook([code("a", "1"), code("a", "2")]).encode(),
    "an invalid id": notebook([code("../../x", "1")]).encode(),
    "binary": bytes(range(256)) * 10,
    "deep nesting": b'{"cells": ' + b"[" * 100_000 + b"]" * 100_000 + b', "nbformat": 4}',
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
async def test_a_bad_notebook_is_a_clear_error_and_stays_as_it_was(root: Path, name: str) -> None:
    bad = root / "bad.ipynb"
    bad.write_bytes(BAD_FILES[name])
    done = await turn(
        root,
        [
            ("notebook_read", {"path": "bad.ipynb"}),
            ("notebook_edit", {"path": "bad.ipynb", "edit_mode": "insert", "new_source": "y = 2"}),
            ("notebook_edit", {"path": "bad.ipynb", "cell_id": "a", "new_source": "y = 2"}),
        ],
    )
    for n in (1, 2, 3):
        text = done.result(n)
        assert "bad.ipynb" in text and ("not" in text or "damaged" in text or "id" in text), text
        assert "failed unexpectedly" not in text
    assert bad.read_bytes() == BAD_FILES[name]


async def test_a_directory_or_a_fifo_named_like_a_notebook(root: Path) -> None:
    (root / "dir.ipynb").mkdir()
    os.mkfifo(root / "pipe.ipynb")
    done = await turn(
        root,
        [("notebook_read", {"path": "dir.ipynb"}), ("notebook_read", {"path": "pipe.ipynb"})],
    )
    assert "cannot be read" in done.result(1) or "not" in done.result(1)
    assert "not a regular file" in done.result(2) or "cannot be read" in done.result(2)


async def test_unknown_ids_and_ids_of_another_notebook_change_nothing(root: Path) -> None:
    other, third = root / "other.ipynb", root / "third.ipynb"
    other.write_text(notebook([code("calc", "x = 1\nprint(x)\n"), code("own", "z = 3\n")]))
    third.write_text(notebook([code("calc", "x = 1\nprint(x)\n")]))
    before = (root / "nb.ipynb").read_text(), other.read_text(), third.read_text()
    done = await turn(
        root,
        [
            ("notebook_read", {"path": "nb.ipynb"}),
            ("notebook_edit", {"path": "nb.ipynb", "cell_id": "nope", "new_source": "y"}),
            # the same id in a copy the model never read: not the cell it read
            ("notebook_edit", {"path": "other.ipynb", "cell_id": "calc", "new_source": "y"}),
            ("notebook_run", {"path": "third.ipynb", "cell_id": "calc"}),
            ("notebook_edit", {"path": "third.ipynb", "edit_mode": "delete", "cell_id": "calc"}),
            ("notebook_edit", {"path": "nb.ipynb", "edit_mode": "move", "cell_id": "own", "index": 0}),
        ],
    )  # fmt: skip
    assert "has no cell with id 'nope'" in done.result(2)
    assert "not been read by you yet" in done.result(3)
    assert "read cell calc of third.ipynb with notebook_read first" in done.result(4)
    assert "not been read by you yet" in done.result(5)
    assert "has no cell with id 'own'" in done.result(6)
    assert ((root / "nb.ipynb").read_text(), other.read_text(), third.read_text()) == before


async def test_ten_thousand_cells_read_bounded_and_edit_in_place(root: Path) -> None:
    cells = [code(f"c{n}", f"value_{n} = {n}\n") for n in range(10_000)]
    big = root / "big.ipynb"
    big.write_text(notebook(cells))
    before = big.read_text()
    done = await turn(
        root,
        [
            ("notebook_read", {"path": "big.ipynb"}),
            ("notebook_read", {"path": "big.ipynb", "cell_id": "c9999"}),
            ("notebook_edit", {"path": "big.ipynb", "cell_id": "c9999", "new_source": "last = 1\n"}),
        ],
    )  # fmt: skip
    listing = done.result(1)
    assert len(listing) < 120_000
    assert "10000 cells" in listing and "more cells not listed" in listing
    assert "value_9999" in done.result(2)
    after = big.read_text()
    assert after.replace('"last = 1\\n"', '"value_9999 = 9999\\n"') == before


async def test_a_50_mb_output_is_bounded_and_kept_byte_for_byte(root: Path) -> None:
    huge = {"output_type": "stream", "name": "stdout", "text": "x" * 50_000_000}
    path = root / "huge.ipynb"
    path.write_text(notebook([code("loud", "print('x' * 50_000_000)\n", [huge]), code("b", "1\n")]))
    before = path.read_bytes()
    done = await turn(
        root,
        [
            ("notebook_read", {"path": "huge.ipynb"}),
            ("notebook_edit", {"path": "huge.ipynb", "cell_id": "b", "new_source": "2\n"}),
        ],
    )
    assert len(done.result(1)) < 100_000 and "more characters" in done.result(1)
    after = path.read_bytes()
    start = before.index(b'"id": "loud"')
    assert after[:start] == before[:start] and b"x" * 50_000_000 in after


def _png_claiming(width: int, height: int) -> str:
    head = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + head + struct.pack(">I", zlib.crc32(b"IHDR" + head))
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk).decode()


BAD_IMAGES = {
    "not base64": "%%% this is not base64 %%%",
    "a bomb: a tiny file claiming a huge picture": _png_claiming(100_000, 100_000),
    "truncated": png_b64(30, 30)[:40],
    "random bytes": base64.b64encode(os.urandom(400)).decode(),
    "not a string": 12345,
}


async def test_malformed_images_are_named_never_sent_and_never_crash(root: Path) -> None:
    outputs = [image_output(data) for data in BAD_IMAGES.values()]  # type: ignore[arg-type]
    jpeg = {"output_type": "display_data", "metadata": {},
            "data": {"image/jpeg": png_b64(5, 5)}}  # fmt: skip
    path = root / "images.ipynb"
    path.write_text(notebook([code("pics", "show()\n", [*outputs, jpeg])]))
    before = path.read_text()
    done = await turn(root, [("notebook_read", {"path": "images.ipynb"})])
    text = done.result(1)
    assert text.count("not shown") == len(BAD_IMAGES) + 1, text
    assert '"type": "image"' not in text
    assert path.read_text() == before


SPELLINGS = ["secret.ipynb", "./secret.ipynb", "sub/../secret.ipynb", "{root}/secret.ipynb",
             "alias.ipynb"]  # fmt: skip


@pytest.mark.parametrize("rule", ["NotebookEdit(./secret.ipynb)", "Edit(secret.ipynb)",
                                  "Write(**/*.ipynb)", "Read(./secret.ipynb)"])  # fmt: skip
async def test_deny_rules_hold_whatever_the_spelling(root: Path, rule: str) -> None:
    secret = root / "secret.ipynb"
    secret.write_text(notebook([code("s", "x = 1\n")]))
    (root / "sub").mkdir()
    (root / "alias.ipynb").symlink_to(secret)
    (root / ".mewcode").mkdir()
    (root / ".mewcode" / "settings.local.yaml").write_text(f'permissions:\n  deny: ["{rule}"]\n')
    before = secret.read_text()
    calls = [
        ("notebook_edit", {"path": p.format(root=root), "edit_mode": "insert", "new_source": "y"})
        for p in SPELLINGS
    ]
    done = await turn(root, calls, mode="bypassPermissions")
    for n in range(1, len(SPELLINGS) + 1):
        assert "Permission denied" in done.result(n), (n, done.result(n))
    assert secret.read_text() == before


async def test_reads_a_read_rule_denies(root: Path) -> None:
    (root / ".mewcode").mkdir()
    (root / ".mewcode" / "settings.local.yaml").write_text(
        'permissions:\n  deny: ["Read(nb.ipynb)"]\n'
    )
    done = await turn(root, [("notebook_read", {"path": "nb.ipynb"})], mode="bypassPermissions")
    assert "Permission denied" in done.result(1) and "x = 1" not in done.result(1)


@pytest.mark.parametrize(
    "where", ["outside", "link-out", ".mewcode/nb.ipynb", ".claude/nb.ipynb", ".git/nb.ipynb"]
)
async def test_writes_outside_or_to_protected_paths_ask_and_headless_refuses(
    root: Path, tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside the project: asks in every mode, and the headless policy never
    allows it; a protected path asks even in acceptEdits (denied headless)."""
    outside_write = where in ("outside", "link-out")
    monkeypatch.setenv("MEWCODE_HEADLESS_APPROVAL", "allow" if outside_write else "deny")
    outside = tmp_path / "elsewhere.ipynb"
    outside.write_text(notebook([code("o", "1\n")]))
    if where == "outside":
        path = str(outside)
    elif where == "link-out":
        (root / "link.ipynb").symlink_to(outside)
        path = "link.ipynb"
    else:
        (root / where).parent.mkdir(exist_ok=True)
        (root / where).write_text(notebook([code("o", "1\n")]))
        path = where
    target = outside if where in ("outside", "link-out") else root / where
    before = target.read_text()
    done = await turn(
        root, [("notebook_edit", {"path": path, "edit_mode": "insert", "new_source": "y"})],
        mode="acceptEdits",
    )  # fmt: skip
    assert "Permission denied" in done.result(1)
    assert ("outside the project" if outside_write else "settings, hooks or git") in done.result(1)
    assert target.read_text() == before


async def test_only_ipynb_files_are_notebooks(root: Path) -> None:
    fake = root / "settings.json"
    fake.write_text(notebook([code("a", "x = 1\n")]))
    before = fake.read_text()
    done = await turn(
        root,
        [("notebook_edit", {"path": "settings.json", "edit_mode": "insert", "new_source": "y"})],
    )
    assert "not a notebook" in done.result(1)
    assert fake.read_text() == before


async def test_plan_mode_offers_reading_only(root: Path) -> None:
    before = (root / "nb.ipynb").read_text()
    done = await turn(
        root,
        [
            ("notebook_read", {"path": "nb.ipynb"}),
            ("notebook_edit", {"path": "nb.ipynb", "cell_id": "calc", "new_source": "y"}),
            ("notebook_run", {"path": "nb.ipynb", "cell_id": "calc"}),
        ],
        mode="plan",
    )
    offered = {t["name"] for t in done.requests[0]["tools"]}
    assert "notebook_read" in offered and not {"notebook_edit", "notebook_run"} & offered
    assert "x = 1" in done.result(1)
    assert "notebook_edit" in done.result(2) and "notebook_run" in done.result(3)
    assert (root / "nb.ipynb").read_text() == before


async def test_a_cell_runs_only_as_read_and_is_judged_by_its_code(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pwned = root / "pwned"
    cell = f"import os\nos.system('touch {pwned}')\n"
    (root / "run.ipynb").write_text(notebook([code("evil", cell), code("fine", "print(1)\n")]))
    (root / ".mewcode").mkdir()
    (root / ".mewcode" / "settings.local.yaml").write_text(
        'permissions:\n  deny: ["RunPython(os.system:*)"]\n  allow: ["RunPython(print:*)"]\n'
    )
    done = await turn(
        root,
        [
            ("notebook_run", {"path": "run.ipynb", "cell_id": "evil"}),  # not read: refused
            ("notebook_read", {"path": "run.ipynb"}),
            ("notebook_run", {"path": "run.ipynb", "cell_id": "evil"}),  # its code is denied
            ("notebook_run", {"path": "run.ipynb", "cell_id": "fine", "code": "print(1)"}),
            ("notebook_run", {"path": "run.ipynb", "cell_id": "fine"}),  # allowed by the rule
        ],
        mode="bypassPermissions",
    )
    assert "notebook_read first" in done.result(1)
    assert "Permission denied" in done.result(3) and "os.system" in done.result(3)
    assert "invalid arguments" in done.result(4)
    assert "Ran cell fine" in done.result(5) and "1" in done.result(5)
    assert not pwned.exists()


async def test_a_cell_changed_after_reading_is_not_run(root: Path) -> None:
    ran = root / "ran"
    path = root / "run.ipynb"
    path.write_text(notebook([code("c", "print('safe')\n")]))

    class Swap:
        def __init__(self) -> None:
            self.calls = 0

    done_read = await turn(
        root, [("notebook_read", {"path": "run.ipynb"})], mode="bypassPermissions"
    )
    assert "safe" in done_read.result(1)
    # a new session of the same kernel tools would not share what was read, so the
    # swap happens in one turn: the file changes between the read and the run
    from tests._notebook_session import Turn  # noqa: F401

    calls = [
        ("notebook_read", {"path": "run.ipynb"}),
        ("notebook_run", {"path": "run.ipynb", "cell_id": "c"}),
    ]
    original = path.read_text()
    swapped = original.replace("print('safe')", f"open('{ran}', 'w').write('x')")

    import mewcode_kernel.core.notebook.access as access

    real = access._read_file
    reads = {"n": 0}

    def read_then_swap(p: Path, shown: str):  # type: ignore[no-untyped-def]
        reads["n"] += 1
        if reads["n"] == 2:
            path.write_text(swapped)  # the person (or another process) changes the cell
        return real(p, shown)

    access._read_file = read_then_swap  # type: ignore[assignment]
    try:
        done = await turn(root, calls, mode="bypassPermissions")
    finally:
        access._read_file = real  # type: ignore[assignment]
    assert "changed since you last read it" in done.result(2)
    assert not ran.exists()


async def test_secrets_in_cells_stay_masked_and_are_never_written_back_masked(root: Path) -> None:
    key = "sk-live-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
    path = root / "keys.ipynb"
    path.write_text(notebook([code("k", f'api_key = "{key}"\nclient = connect(api_key)\n')]))
    done = await turn(
        root,
        [
            ("notebook_read", {"path": "keys.ipynb"}),
            ("notebook_edit", {"path": "keys.ipynb", "cell_id": "k",
                               "new_source": 'api_key = "[masked]"\nclient = connect(api_key, retries=3)\n'}),
            ("notebook_edit", {"path": "keys.ipynb", "cell_id": "k", "old_string": "connect(api_key)",
                               "new_source": "connect(api_key, retries=3)"}),
        ],
        the_shell=shell(api_key=key),
    )  # fmt: skip
    sent = json.dumps(done.requests)
    assert key not in sent
    assert "masked for you" in done.result(2)
    assert f'api_key = \\"{key}\\"' in path.read_text()
    assert "retries=3" in path.read_text()


def _stdout(text: str) -> dict[str, object]:
    return {"output_type": "stream", "name": "stdout", "text": [text]}


@pytest.mark.parametrize("read_alone", [False, True])
async def test_a_secret_one_cell_sets_is_masked_where_any_cell_prints_it(
    root: Path, read_alone: bool
) -> None:
    """The secret is only in the file (the kernel never ran the cell, so it
    is not in the namespace): the cell that sets it, read or not, teaches
    the redactor, and every output showing it, before or after an image
    (results are redacted a block at a time), is masked."""
    password = "Zq8-hunter2-" + "Xv7pL0mN3bQ9"
    aws = "AKIA" + "Q2W3E4R5T6Y7U8I9"
    cells = [
        code("sets", f'db_password = "{password}"\n'),
        code("early", "print(db_password)\n", [_stdout(f"{password}\n")]),
        code("chart", "show()\n", [image_output(png_b64(8, 8))]),
        code("late", "print(cfg)\n", [_stdout(f"cfg: pw={password} key={aws}\n"), {
            "output_type": "error", "ename": "ValueError", "evalue": f"bad {password}",
            "traceback": [f"ValueError: bad {password}"]}]),
        markdown("note", f"The password was {password[:6]}... and the key {aws}"),
    ]  # fmt: skip
    (root / "s.ipynb").write_text(notebook(cells))
    reads = (
        [("notebook_read", {"path": "s.ipynb", "cell_id": cid}) for cid in ("early", "late")]
        if read_alone
        else [("notebook_read", {"path": "s.ipynb"})]
    )
    done = await turn(root, reads, the_shell=shell())
    sent = json.dumps(done.requests)
    assert password not in sent and aws not in sent
    assert "[REDACTED:cell]" in done.result(1)
    assert password in (root / "s.ipynb").read_text()  # the file is unchanged


async def test_a_cell_read_alone_keeps_its_place(root: Path) -> None:
    (root / "p.ipynb").write_text(notebook([code(f"c{i}", f"x = {i}\n") for i in range(4)]))
    done = await turn(root, [("notebook_read", {"path": "p.ipynb", "cell_id": "c2"})])
    assert '<cell index="2" id="c2" type="code">' in done.result(1)


def _claude_hook(root: Path, command: str) -> None:
    (root / ".claude").mkdir(exist_ok=True)
    hooks = {"PreToolUse": [{"matcher": "NotebookEdit",
                             "hooks": [{"type": "command", "command": command}]}]}  # fmt: skip
    (root / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


async def test_a_claude_code_hook_sees_notebook_edit_as_claude_code_names_it(root: Path) -> None:
    """Matcher ``NotebookEdit``, the file as ``notebook_path`` (and ``file_path``),
    resolved: a guard comparing it with the project is not fooled by ``../``."""
    seen = root / "seen.jsonl"
    _claude_hook(root, f"cat >> {seen}; echo >> {seen}")
    (root / "sub").mkdir()
    (root / "n.ipynb").write_text(notebook([code("a", "x = 1\n")]))
    edit = {"path": "sub/../n.ipynb", "cell_id": "a", "new_source": "x = 2\n"}
    await turn(root, [("notebook_read", {"path": "n.ipynb"}), ("notebook_edit", edit)])
    [payload] = [json.loads(line) for line in seen.read_text().splitlines() if line]
    assert payload["tool_name"] == "NotebookEdit"
    real = str((root / "n.ipynb").resolve())
    assert payload["tool_input"]["notebook_path"] == payload["tool_input"]["file_path"] == real


async def test_a_hook_redirecting_notebook_path_is_followed_and_still_judged(root: Path) -> None:
    """A hook's ``updatedInput`` naming another notebook by ``notebook_path``
    moves the edit there (as in Claude Code); the rules still judge it: a
    redirect to a denied notebook is refused, and neither file changes."""
    (root / "n.ipynb").write_text(notebook([code("a", "x = 1\n")]))
    (root / "other.ipynb").write_text(notebook([code("a", "x = 1\n")]))
    (root / "locked.ipynb").write_text(notebook([code("a", "x = 1\n")]))
    before = (root / "locked.ipynb").read_text()
    for target in ("other.ipynb", "locked.ipynb"):
        out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {
            "notebook_path": str(root / target), "cell_id": "a", "new_source": f"x = {len(target)}"}}}  # fmt: skip
        _claude_hook(root, f"printf '%s' '{json.dumps(out)}'")
        (root / ".mewcode").mkdir(exist_ok=True)
        (root / ".mewcode" / "settings.local.yaml").write_text(
            "permissions:\n  deny:\n    - NotebookEdit(locked.ipynb)\n"
        )
        await turn(root, [("notebook_read", {"path": target}),
                          ("notebook_edit", {"path": "n.ipynb", "cell_id": "a", "new_source": "x = 9\n"})])  # fmt: skip
    assert "x = 1" in "".join(json.loads((root / "n.ipynb").read_text())["cells"][0]["source"])
    assert f"x = {len('other.ipynb')}" in (root / "other.ipynb").read_text()
    assert (root / "locked.ipynb").read_text() == before
