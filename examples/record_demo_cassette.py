"""Re-record the bundled demo cassette (run by hand after changing the system
prompt, the tools, or the demo task: the replay refuses requests that differ).

A local scripted server plays the model; the exchanges are recorded through
the real Anthropic SDK into mewcode_kernel/data/demo.cassette.json.

    python examples/record_demo_cassette.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from demo import TASK, approve_and_say, make_project, run_demo

from mewcode_kernel.core import open_session
from mewcode_kernel.core.providers.recording.replay import DEMO_CASSETTE
from mewcode_kernel.testing.wire import ScriptedServer, reply, usage

SCRIPT = [
    reply(
        text="I'll start by reading the module.",
        tool_calls=[("read_file", {"path": "stats.py"})],
        usage=usage(12, 0, 2480, 64),
    ),
    reply(
        text="`len(xs)` is 0 for an empty list, so the division fails. I'll guard it.",
        tool_calls=[
            (
                "edit_file",
                {
                    "path": "stats.py",
                    "old_string": "    return sum(xs) / len(xs)\n",
                    "new_string": "    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n",
                },
            )
        ],
        usage=usage(95, 2480, 0, 141),
    ),
    reply(
        usage=usage(180, 2575, 0, 73),
        tool_calls=[
            (
                "bash",
                {
                    "command": "python3 -c 'from stats import mean; print(mean([]), mean([1, 2, 3]))'"
                },
            )
        ],
    ),
    reply(
        text=(
            "Fixed. `mean()` now returns `0.0` for an empty list and still averages "
            "non-empty ones: `mean([])` gives `0.0` and `mean([1, 2, 3])` gives `2.0`."
        ),
        usage=usage(60, 2755, 0, 52),
    ),
]


async def main() -> int:
    DEMO_CASSETTE.parent.mkdir(parents=True, exist_ok=True)
    DEMO_CASSETTE.unlink(missing_ok=True)
    with ScriptedServer(SCRIPT) as server, tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        make_project(project)
        (project / ".mewcode.yaml").write_text(
            "default_provider: anthropic\nproviders:\n  anthropic:\n    protocol: anthropic\n"
            f"    model: claude-sonnet-4-5\n    base_url: {server.base_url}\n    api_key: recorded-demo\n"
        )
        os.environ["MEWCODE_TRUST_PROJECT"] = "1"  # the scratch project made just above
        session = open_session(
            project, approval_handler=approve_and_say, record_to=DEMO_CASSETTE, env={}
        )
        await run_demo(project, session)
        server.assert_all_used()
    print(f"\nrecorded {DEMO_CASSETTE} for the task: {TASK!r}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
