"""Running scripted turns with the notebook tools in process: a session on a
scripted model, the kernel toolset on a stand-in shell, no front end."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import patch

from magics.kernel_tools.errors import ErrorTracker
from magics.kernel_tools.tools import KernelTools, kernel_toolset
from mewcode_kernel.core import open_session
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply


@dataclass
class Turn:
    events: list[Any]
    requests: list[dict[str, Any]]

    def result(self, n: int = -1) -> str:
        """The text of the tool results the model got in request ``n``."""
        content = self.requests[n]["messages"][-1]["content"]
        out = []
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                inner = block["content"]
                out.append(inner if isinstance(inner, str) else json.dumps(inner))
        return "\n".join(out)

    def approvals(self) -> list[Any]:
        return [e for e in self.events if type(e).__name__ == "ApprovalResolved"]


def shell(**user_ns: Any) -> Any:
    return SimpleNamespace(user_ns=dict(user_ns), user_ns_hidden={}, execution_count=1)


async def turn(
    root: Path,
    calls: list[tuple[str, dict[str, Any]]],
    *,
    mode: str = "acceptEdits",
    the_shell: Any = None,
    home: Path | None = None,
) -> Turn:
    """One turn in which the model makes ``calls`` one per request, then stops."""
    steps = [reply(tool_calls=[call]) for call in calls] + [reply(text="done")]
    home = home or root.parent / "home"
    home.mkdir(exist_ok=True)
    with ScriptedServer(steps) as server:
        (root / ".mewcode.yaml").write_text(
            "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
            f"    model: test-model\n    base_url: {server.base_url}\n    api_key: sk-test\n"
        )
        tools = KernelTools(the_shell or shell(), ErrorTracker(), root=root)
        with patch.dict(os.environ, {"MEWCODE_TRUST_PROJECT": "1"}):  # the user's own project
            session = open_session(
                root, home=home, mode=mode, toolsets=[kernel_toolset(tools)],
                notebooks=tools.notebooks.access,
            )  # fmt: skip
        async with session:
            events = await collect(session.run("work on the notebook"))
        return Turn(events=events, requests=server.requests)
