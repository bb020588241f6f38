"""Re-record every demo notebook's cassette, then re-execute the notebooks
offline to refresh their saved outputs.

Run it after changing anything that changes what is sent to the model (the
system prompt, tool definitions, a notebook's prompts): the replay refuses
requests that differ from its recording, and nbval compares the saved
outputs.

    python notebooks/record_cassettes.py                 # all notebooks
    python notebooks/record_cassettes.py quickstart      # some of them

For each notebook, a local ``ScriptedServer`` plays the model (the replies
scripted below, one per model request, in order). The notebook is executed
headless in the ``mewcode`` kernel, whose provider records every exchange
(``MEWCODE_RECORD``) into ``<notebook>.cassette.json``; then it is executed
again with no API key, replaying that cassette, and saved with the outputs.
The kernelspec is installed into a temporary ``JUPYTER_PATH`` and ``HOME`` is
a temporary directory, so nothing of the user's setup leaks in.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from mewcode_kernel.testing import install_kernelspec, scrubbed_env
from mewcode_kernel.testing.wire import ScriptedServer, WireStep, reply, usage

HERE = Path(__file__).resolve().parent


GREET_TYPED = (
    'def greet(name: str) -> str:\n    return "Hello, " + name\n\n\n'
    'def farewell(name: str) -> str:\n    return "Goodbye, " + name\n'
)

# Asked for twice in approvals_and_modes: denied headless, then approved.
ADD_FAREWELL = (
    "edit_file",
    {
        "path": "greet.py",
        "old_string": '    return "Hello, " + name\n',
        "new_string": (
            '    return "Hello, " + name\n\n\ndef farewell(name):\n    return "Goodbye, " + name\n'
        ),
    },
)

SCRIPTS: dict[str, list[WireStep]] = {
    "quickstart": [
        reply(
            text="Let me read it.",
            tool_calls=[("read_file", {"path": "stats.py"})],
            usage=usage(14, 0, 2650, 40),
        ),
        reply(
            text=(
                "`stats.py` defines one function, `mean(xs)`, which returns the arithmetic mean "
                "of a sequence of numbers.\n\n"
                "**Fragile:** it divides by `len(xs)`, so `mean([])` raises "
                "`ZeroDivisionError`. Decide what an empty input should give (for example "
                "`0.0`, or a clear `ValueError`)."
            ),
            usage=usage(96, 2650, 0, 88),
        ),
        reply(
            text="I'll guard the empty case.",
            tool_calls=[
                (
                    "edit_file",
                    {
                        "path": "stats.py",
                        "old_string": "    return sum(xs) / len(xs)\n",
                        "new_string": (
                            "    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n"
                        ),
                    },
                )
            ],
            usage=usage(40, 2746, 0, 120),
        ),
        reply(
            text=(
                "Done: `mean([])` now returns `0.0`, and non-empty lists are averaged as before."
            ),
            usage=usage(60, 2866, 0, 30),
        ),
        reply(
            text=(
                "I made `mean()` return `0.0` for an empty list instead of raising "
                "`ZeroDivisionError`."
            ),
            usage=usage(25, 2926, 0, 24),
        ),
    ],
    "approvals_and_modes": [
        reply(
            text="I'll add it after `greet()`.",
            tool_calls=[ADD_FAREWELL],
            usage=usage(18, 0, 2650, 90),
        ),
        reply(
            text=(
                "I could not edit `greet.py`: the change needs your approval and nobody could "
                "give it in this run. This is the function I would add:\n\n"
                '```python\ndef farewell(name):\n    return "Goodbye, " + name\n```'
            ),
            usage=usage(80, 2650, 0, 60),
        ),
        reply(
            tool_calls=[ADD_FAREWELL],
            usage=usage(30, 2730, 0, 85),
        ),
        reply(text="Added `farewell(name)` below `greet()`.", usage=usage(40, 2815, 0, 14)),
        reply(
            tool_calls=[("read_file", {"path": "greet.py"})],
            usage=usage(35, 2855, 0, 20),
        ),
        reply(
            text=(
                "A plan, nothing changed yet:\n\n"
                "1. Annotate both functions: `def greet(name: str) -> str` and "
                "`def farewell(name: str) -> str`.\n"
                "2. Check the module still imports with `python3 -c 'import greet'`."
            ),
            usage=usage(70, 2890, 0, 70),
        ),
        reply(
            tool_calls=[("write_file", {"path": "greet.py", "content": GREET_TYPED})],
            usage=usage(40, 2960, 0, 95),
        ),
        reply(
            tool_calls=[
                ("bash", {"command": "python3 -c 'import greet; print(greet.farewell(\"Ada\"))'"})
            ],
            usage=usage(30, 3055, 0, 40),
        ),
        reply(
            text=(
                "Added the type hints to `greet()` and `farewell()`. I could not run the import "
                "check: in `acceptEdits` mode commands still need approval, and nobody could "
                "give it in this run."
            ),
            usage=usage(60, 3095, 0, 45),
        ),
    ],
    "skills": [
        reply(
            text="This matches the release-notes skill; loading it.",
            tool_calls=[("load_skill", {"name": "release-notes", "args": "1.4"})],
            usage=usage(30, 0, 2900, 40),
        ),
        reply(tool_calls=[("read_file", {"path": "CHANGES.txt"})], usage=usage(120, 2930, 0, 30)),
        reply(
            # one call per reply: concurrent reads finish in any order, and the
            # saved transcript lists them as they finish
            tool_calls=[("read_file", {"path": ".claude/skills/release-notes/template.md"})],
            usage=usage(60, 3050, 0, 30),
        ),
        reply(
            text=(
                "## Version 1.4\n\n### Added\n- CSV export.\n\n### Fixed\n"
                "- No more crash on empty input."
            ),
            usage=usage(70, 3110, 0, 35),
        ),
        reply(
            text="**1.4**: adds CSV export.\nFixes the crash on empty input.",
            usage=usage(260, 3225, 0, 20),
        ),
        reply(
            tool_calls=[("read_file", {"path": "CHANGES.txt"})],
            usage=usage(290, 3245, 0, 25),
        ),
        reply(
            text="## Version 1.3\n\n### Added\n- Dark mode.\n\n### Fixed\n- Nothing listed.",
            usage=usage(80, 3535, 0, 30),
        ),
    ],
    "sessions_and_resume": [
        reply(text="OK.", usage=usage(20, 0, 2650, 3)),
        reply(text="Our release codename is **Blue Heron**.", usage=usage(15, 2670, 0, 10)),
        reply(
            text=(
                "I don't know: nothing in this conversation or in the project mentions a "
                "release codename."
            ),
            usage=usage(20, 2650, 0, 20),
        ),
        reply(text="It is **Blue Heron**.", usage=usage(25, 2700, 0, 8)),
    ],
    "mcp": [
        reply(
            text="Let me ask the inventory server.",
            tool_calls=[
                ("mcp__inventory__stock", {"item": "widget"}),
                ("mcp__inventory__logo", {}),
            ],
            usage=usage(22, 0, 2900, 60),
        ),
        reply(
            text=(
                "We have **42 widgets** in stock, in aisle 3. The logo is a small, solid orange "
                "square."
            ),
            usage=usage(180, 2900, 0, 30),
        ),
        reply(
            tool_calls=[("mcp__inventory__restock", {"item": "gadget", "count": 10})],
            usage=usage(30, 3080, 0, 40),
        ),
        reply(
            text=(
                "I could not place the order: restocking changes the inventory, so it needs your "
                "approval, and nobody could give it in this run. Allow `mcp__inventory__restock` "
                "(or approve the call in a live notebook) and ask again."
            ),
            usage=usage(70, 3110, 0, 50),
        ),
    ],
}

SCRIPTS["hooks"] = [
    reply(
        text="I'll remove it.",
        tool_calls=[("bash", {"command": "rm -rf build"})],
        usage=usage(40, 0, 2950, 30),
    ),
    reply(
        text=(
            "A project hook blocked `rm -rf build`: this project does not allow `rm -rf`, and "
            "asks to move files to `trash/` instead. Should I move `build/` to `trash/`?"
        ),
        usage=usage(90, 2950, 0, 40),
    ),
    reply(
        tool_calls=[
            (
                "write_file",
                {
                    "path": "app.py",
                    "content": (
                        'def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n'
                    ),
                },
            )
        ],
        usage=usage(60, 3040, 0, 60),
    ),
    reply(
        text="Added a docstring to `add()` (ticket DEMO-42); the lint hook reports 0 warnings.",
        usage=usage(80, 3100, 0, 25),
    ),
]


CHECK_REVENUE = (
    "import importlib\n\nimport cleaning\n\nimportlib.reload(cleaning)\n"
    "cleaning.monthly_revenue(sales)"
)

SCRIPTS["data_analysis"] = [
    reply(
        text="Let me see the error first.",
        tool_calls=[("last_error", {})],
        usage=usage(40, 0, 3600, 20),
    ),
    reply(
        text="`price` failed to convert; let me look at that column.",
        tool_calls=[("inspect_variable", {"name": "sales"})],
        usage=usage(420, 3600, 0, 30),
    ),
    reply(
        text=(
            "`price` was read as text because one row says `unknown`. I'll read the helper "
            "and make it treat a price that is not a number as missing."
        ),
        tool_calls=[("read_file", {"path": "cleaning.py"})],
        usage=usage(900, 4020, 0, 60),
    ),
    reply(
        tool_calls=[
            (
                "edit_file",
                {
                    "path": "cleaning.py",
                    "old_string": '    revenue = df["units"] * df["price"].astype(float)\n',
                    "new_string": (
                        "    import pandas as pd\n\n"
                        '    # a price that is not a number ("unknown") counts as missing\n'
                        '    price = pd.to_numeric(df["price"], errors="coerce")\n'
                        '    revenue = df["units"] * price\n'
                    ),
                },
            )
        ],
        usage=usage(120, 4920, 0, 110),
    ),
    reply(
        tool_calls=[("propose_cell", {"source": CHECK_REVENUE})],
        usage=usage(60, 5040, 0, 50),
    ),
    reply(
        text=(
            "Fixed: `monthly_revenue()` now converts `price` with `pd.to_numeric(..., "
            'errors="coerce")`, so North\'s February row (price `unknown`) counts as missing '
            "instead of failing. Run the proposed cell to reload the module and see the "
            "totals; February then holds only South's 9 × 10.00."
        ),
        usage=usage(40, 5100, 0, 80),
    ),
]


# The chart cell the agent inserts: a PNG made with the standard library (stored,
# not compressed: the same bytes everywhere, so the replayed request matches).
CHART = """\
import struct
import zlib

from IPython.display import Image, display


def png(rows):
    raw = b"".join(b"\\0" + bytes(c for px in row for c in px) for row in rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    head = struct.pack(">IIBBBBB", len(rows[0]), len(rows), 8, 2, 0, 0, 0)
    return b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b"")


top = max(signups)
bar = lambda x, y: x % 10 < 8 and signups[x // 10] * 50 // top >= 50 - y
rows = [[(70, 130, 180) if bar(x, y) else (255, 255, 255) for x in range(10 * len(signups))] for y in range(50)]
display(Image(data=png(rows)))"""


def _inserted(body: dict[str, Any]) -> str:
    """The id notebook_edit returned for the inserted cell (the last tool result)."""
    import re

    found = re.search(r"cell_id: ([A-Za-z0-9_-]+)", json.dumps(body["messages"][-1]["content"]))
    assert found, body["messages"][-1]
    return found.group(1)


SCRIPTS["notebook_workspace"] = [
    reply(
        text="Let me read the notebook first.",
        tool_calls=[("notebook_read", {"path": "report.ipynb"})],
        usage=usage(60, 0, 3900, 20),
    ),
    reply(
        text="The chart needs `signups` in the kernel: I'll run the data cell.",
        tool_calls=[("notebook_run", {"path": "report.ipynb", "cell_id": "data"})],
        usage=usage(300, 3900, 0, 30),
    ),
    reply(
        text="Now the chart, right after the data cell.",
        tool_calls=[
            (
                "notebook_edit",
                {
                    "path": "report.ipynb",
                    "edit_mode": "insert",
                    "cell_id": "data",
                    "new_source": CHART,
                },
            )
        ],
        usage=usage(120, 4200, 0, 260),
    ),
    lambda body: reply(
        tool_calls=[("notebook_run", {"path": "report.ipynb", "cell_id": _inserted(body)})],
        usage=usage(60, 4320, 0, 30),
    ),
    reply(
        text=(
            "The chart shows seven bars, rising to 35 in the last week. Now the growth cell: "
            "it divides by the last week, not the first."
        ),
        tool_calls=[
            (
                "notebook_edit",
                {
                    "path": "report.ipynb",
                    "cell_id": "growth",
                    "old_string": "/ signups[-1]",
                    "new_source": "/ signups[0]",
                },
            )
        ],
        usage=usage(900, 4380, 0, 80),
    ),
    reply(
        tool_calls=[("notebook_run", {"path": "report.ipynb", "cell_id": "growth"})],
        usage=usage(60, 5280, 0, 30),
    ),
    reply(
        text=(
            "Done: a bar chart of the weekly signups is below the data cell (run, its image is "
            "in the cell), and the growth cell now measures against the first week: 192% "
            "(12 to 35 signups)."
        ),
        usage=usage(80, 5340, 0, 60),
    ),
]


class Routed:
    """Script steps for a notebook whose subagents run concurrently with the
    agent: requests of a subagent (its system prompt says so) take the next
    ``child`` reply, the agent's the next ``parent`` reply, in any order."""

    def __init__(self, parent: list[WireStep], child: list[WireStep]) -> None:
        self.parent, self.child = list(parent), list(child)
        self.lock = threading.Lock()

    def steps(self) -> list[WireStep]:
        return [self] * (len(self.parent) + len(self.child))

    def __call__(self, body: dict[str, Any]) -> WireStep:
        is_child = "as a subagent of MewCode" in json.dumps(body.get("system", ""))
        with self.lock:
            return (self.child if is_child else self.parent).pop(0)


SCRIPTS["subagents"] = Routed(
    parent=[
        reply(
            tool_calls=[
                (
                    "Agent",
                    {
                        "description": "map the project",
                        "prompt": "List the files of this project and say what each holds.",
                        "subagent_type": "Explore",
                    },
                )
            ],
            usage=usage(25, 0, 3400, 60),
        ),
        reply(
            text=(
                "Two files: `stats.py` defines `mean(xs)`, and `test_stats.py` holds one test "
                "of it."
            ),
            usage=usage(90, 3400, 0, 30),
        ),
        reply(
            tool_calls=[
                (
                    "Agent",
                    {
                        "description": "check the tests",
                        "prompt": "Read the tests and the code they test; report what is covered and what is not.",
                        "subagent_type": "general-purpose",
                        "run_in_background": True,
                        "name": "test-check",
                    },
                )
            ],
            usage=usage(30, 3490, 0, 70),
        ),
        reply(
            text="Started `test-check` in the background; I'll report what it finds.",
            usage=usage(60, 3560, 0, 20),
        ),
        reply(
            text=(
                "The check found one test, `test_mean`, covering `mean([1, 2, 3])`. Nothing "
                "covers an empty list, where `mean()` divides by zero."
            ),
            usage=usage(140, 3620, 0, 40),
        ),
        reply(tool_calls=[("read_file", {"path": "stats.py"})], usage=usage(20, 0, 1900, 25)),
        reply(
            text=(
                "Plan:\n\n1. In `stats.py`, return `0.0` from `mean()` when `xs` is empty, "
                "before dividing.\n2. Add `test_mean_empty` to `test_stats.py`: "
                "`assert mean([]) == 0.0`.\n3. Run `python3 -m pytest -q`.\n\n"
                "Critical files:\n- stats.py: the function to change\n"
                "- test_stats.py: where the new test goes"
            ),
            usage=usage(60, 1925, 0, 90),
        ),
    ],
    child=[
        reply(tool_calls=[("glob", {"pattern": "*"})], usage=usage(15, 0, 900, 20)),
        reply(
            text="stats.py: `mean(xs)`, the average of a list. test_stats.py: one pytest test of `mean`.",
            usage=usage(40, 900, 0, 30),
        ),
        reply(tool_calls=[("read_file", {"path": "test_stats.py"})], usage=usage(20, 0, 1100, 20)),
        reply(
            text=(
                "Covered: `mean([1, 2, 3]) == 2` (test_mean). Not covered: an empty list, "
                "which raises ZeroDivisionError."
            ),
            usage=usage(50, 1100, 0, 40),
        ),
    ],
).steps()


def clean_env(home: str, **extra: str) -> dict[str, str]:
    """No keys, endpoints or MewCode settings of the user's; ``HOME`` is ``home``;
    the kernel runs this checkout's code (not whatever an editable install points at)."""
    path = os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))
    return scrubbed_env(HOME=home, PYTHONPATH=path, **extra)


class _AsNbval(NotebookClient):
    """Runs cells as nbval does (``store_history=False``), so the kernel's
    count (``In [N]`` in what a tool tells the model) is the same when
    recording as when nbval replays."""

    async def async_execute_cell(  # type: ignore[override]
        self, cell: Any, cell_index: int, execution_count: int | None = None, **_: Any
    ) -> Any:
        return await super().async_execute_cell(
            cell, cell_index, execution_count, store_history=False
        )


def execute(path: Path, env: dict[str, str]) -> nbformat.NotebookNode:
    """Run ``path`` headless in the ``mewcode`` kernel, in the notebook's folder."""
    nb = nbformat.read(path, as_version=4)
    client = _AsNbval(
        nb,
        kernel_name="mewcode",
        timeout=300,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(env=env)
    return nb


def record(name: str) -> None:
    notebook = HERE / f"{name}.ipynb"
    cassette = HERE / f"{name}.cassette.json"
    print(f"{name}: recording {cassette.name}", flush=True)
    cassette.unlink(missing_ok=True)
    with ScriptedServer(SCRIPTS[name]) as server, tempfile.TemporaryDirectory() as home:
        env = clean_env(
            home,
            ANTHROPIC_API_KEY="recording-key",
            ANTHROPIC_BASE_URL=server.base_url,
            MEWCODE_RECORD=str(cassette),
        )
        execute(notebook, env)
        server.assert_all_used()
    cassette.chmod(0o644)  # recorded privately (mode 0600); it holds no secrets and is shared
    print(f"{name}: re-executing offline to refresh the saved outputs", flush=True)
    with tempfile.TemporaryDirectory() as home:
        nb = execute(notebook, clean_env(home))
    nbformat.write(nb, notebook)


def main(names: list[str]) -> int:
    unknown = sorted(set(names) - set(SCRIPTS))
    if unknown:
        print(f"unknown notebook(s): {', '.join(unknown)}; known: {', '.join(SCRIPTS)}")
        return 2
    with tempfile.TemporaryDirectory() as prefix:
        os.environ["JUPYTER_PATH"] = str(install_kernelspec(Path(prefix)))
        for name in names or list(SCRIPTS):
            record(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
