"""``/doctor``: where this session runs and what stands in its way, each
problem with its fix (``core.doctor``); the live session's sandbox, trust and
MCP servers are what it reports."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..doctor import DoctorInputs, McpRow, gather, markdown, to_data
from .registry import CommandResult, command

if TYPE_CHECKING:
    from ..agent_session import AgentSession


def inputs_of(session: AgentSession) -> DoctorInputs:
    """What the checks look at for a live session."""
    info = session.sandbox.describe()
    rows = None
    if session.mcp is not None:
        rows = [
            McpRow(
                name=s.name,
                where=s.scope,
                state=s.state + (f", {s.tools} tool(s)" if s.state == "connected" else ""),
                problem=s.error if s.state == "failed" else None,
            )
            for s in session.mcp.statuses()
        ]
    return DoctorInputs(
        env=os.environ,  # the kernel's own; the key file is read and named by its check
        home=session.safety.home,
        root=session.root,
        config=session.config,
        trust_state=session.trust.state,
        sandbox=(str(info["state"]), str(info["reason"])),
        mcp=rows if rows is not None else [],
    )


@command("doctor", help="Check where MewCode runs and what stands in its way, with fixes.")
async def doctor_command(session: AgentSession, args: str) -> CommandResult:
    checks = gather(inputs_of(session))
    return CommandResult(markdown=markdown(checks), data=to_data(checks))
