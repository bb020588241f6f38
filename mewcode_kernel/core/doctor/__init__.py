"""``/doctor`` and ``python -m mewcode_kernel doctor``: where MewCode runs and
what stands in its way (the project root and how it was chosen, the
notebook, the MewCode folder, which provider keys are visible, the sandbox,
trust, MCP servers, the sessions folder, a gateway), each problem with its fix."""

from __future__ import annotations

from .checks import Check, DoctorInputs, McpRow
from .report import CHECKS, gather, inputs_without_session, markdown, text, to_data

__all__ = [
    "CHECKS",
    "Check",
    "DoctorInputs",
    "McpRow",
    "gather",
    "inputs_without_session",
    "markdown",
    "text",
    "to_data",
]
