"""Building agents whose commands run in the OS sandbox, for the sandbox tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core.agent import Agent
from mewcode_kernel.core.config import SandboxSettings
from mewcode_kernel.core.fs import Workspace
from mewcode_kernel.core.permission import Gate, RuleSet, RuleSource
from mewcode_kernel.core.permission.hidden import read_denied_paths
from mewcode_kernel.core.sandbox import Sandbox, detect
from mewcode_kernel.core.tools import RunContext, ToolRegistry, bash, builtin_tools
from mewcode_kernel.testing import ScriptedModel
from tests._mcp import NO_SANDBOX

SUPPORT = detect()
needs_bwrap = pytest.mark.skipif(not SUPPORT.available, reason=f"{NO_SANDBOX} ({SUPPORT.reason})")


def rules(*pairs: tuple[str, str]) -> RuleSet:
    found = RuleSet()
    for behavior, text in pairs:
        assert found.add_text(text, behavior, RuleSource(label="test")) is not None, text  # type: ignore[arg-type]
    return found


def sandboxed_agent(
    root: Path,
    model: ScriptedModel,
    *,
    mode: str = "bypassPermissions",
    rule_pairs: Iterable[tuple[str, str]] = (),
    settings: SandboxSettings | None = None,
    sandbox: Sandbox | None = None,
    **kw: Any,
) -> Agent:
    """An agent in ``root`` whose ``bash`` runs in the sandbox (``settings``),
    hiding what the Read deny rules among ``rule_pairs`` cover."""
    box = sandbox or Sandbox(root, settings or SandboxSettings())
    gate = Gate(rules=rules(*rule_pairs), mode=mode, root=root, sandboxed=box.active)  # type: ignore[arg-type]
    box.hidden_paths = lambda: read_denied_paths(gate.list_rules(), Workspace(root))
    return Agent.of(
        provider=model,
        tools=ToolRegistry(builtin_tools()),
        ctx=RunContext(root=root),
        gate=gate,
        sandbox=box,
        **kw,
    )


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the project that a sandboxed command can see (read
    only): not under /tmp, which the sandbox replaces by its own."""
    base = Path(tempfile.mkdtemp(prefix="mewcode-outside-", dir="/var/tmp"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@dataclass
class BareServices:
    """Just what ``bash`` reads from a session: the sandbox, and a person who
    never says yes (the command runs as the checker let it, no retry)."""

    sandbox: Sandbox

    async def ask_person(self, ctx: RunContext, reason: str) -> bool:
        return False


async def run_in_sandbox(
    root: Path,
    command: str,
    *,
    deny_reads: Iterable[str] = (),
    settings: SandboxSettings | None = None,
    sandbox: Sandbox | None = None,
) -> str:
    """Run ``command`` with the ``bash`` tool inside the sandbox (``sandbox``,
    else one with ``settings``), whatever the permission checks would say (as
    if they had been fooled)."""
    box = sandbox or Sandbox(root, settings or SandboxSettings())
    assert box.active, box.status
    denied = rules(*(("deny", f"Read({r})") for r in deny_reads))
    box.hidden_paths = lambda: read_denied_paths(denied.rules, Workspace(root))
    ctx = RunContext(root=root, services=BareServices(box))  # type: ignore[arg-type]
    return await bash.call(ctx, {"command": command})  # type: ignore[return-value]
