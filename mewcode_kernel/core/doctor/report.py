"""Running the checks in order and showing them: Markdown for ``/doctor``,
plain text for ``python -m mewcode_kernel doctor``, data for programs.

``CHECKS`` is the list, in the order shown; a new line of the report is one
function ``(DoctorInputs) -> list[Check]`` added to it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..config import load_config
from ..errors import ConfigError
from ..key_file import read_key_file, with_key_file
from ..locations import locate_root
from ..trust import assess_project
from .checks import (
    Check,
    DoctorInputs,
    check_gateway,
    check_home,
    check_keys,
    check_mcp,
    check_notebook,
    check_root,
    check_sandbox,
    check_sessions,
    check_telemetry,
    check_trust,
    check_user,
)

__all__ = ["CHECKS", "gather", "inputs_without_session", "markdown", "text", "to_data"]

CheckFunction = Callable[[DoctorInputs], list[Check]]

CHECKS: list[CheckFunction] = [
    check_user,
    check_root,
    check_notebook,
    check_home,
    check_keys,
    check_sandbox,
    check_trust,
    check_mcp,
    check_sessions,
    check_telemetry,
    check_gateway,
]


def gather(inputs: DoctorInputs) -> list[Check]:
    """Every check's lines, in ``CHECKS`` order (a check that fails is a line too)."""
    found: list[Check] = []
    for check in CHECKS:
        try:
            found += check(inputs)
        except Exception as exc:  # one broken check must not hide the others
            found.append(
                Check(
                    topic=check.__name__.removeprefix("check_"),
                    value="could not be checked",
                    problem=f"{type(exc).__name__}: {exc}",
                )
            )
    return found


def inputs_without_session(
    env: Mapping[str, str] | None = None, home: Path | None = None
) -> DoctorInputs:
    """What the checks look at when no session is open (the command line):
    the project a kernel started here would use, its config and trust; MCP
    servers are listed from config, not started."""
    env = os.environ if env is None else env
    try:
        root = locate_root(env=env).path
    except ConfigError:
        return DoctorInputs(env=env, home=home)
    try:
        keyed = with_key_file(env, read_key_file(home, env))
    except ConfigError:
        keyed = env
    trust = assess_project(root, home=home)
    try:
        config = load_config(root, home=home, env=keyed, trust=trust)
    except ConfigError as exc:
        return DoctorInputs(
            env=env, home=home, root=root, config_error=str(exc), trust_state=trust.state
        )
    return DoctorInputs(env=env, home=home, root=root, config=config, trust_state=trust.state)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown(checks: list[Check]) -> str:
    lines = ["| | check | found |", "| --- | --- | --- |"]
    lines += [f"| {'✓' if c.ok else '✗'} | {c.topic} | {_cell(c.value)} |" for c in checks]
    problems = [c for c in checks if not c.ok]
    if problems:
        lines += ["", "**Problems**", ""]
        lines += [
            f"- **{c.topic}**: {c.problem}" + (f"  \n  Fix: {c.fix}" if c.fix else "")
            for c in problems
        ]
    else:
        lines += ["", "No problems found."]
    return "\n".join(lines)


def text(checks: list[Check]) -> str:
    width = max((len(c.topic) for c in checks), default=0)
    lines = [f"{'ok' if c.ok else '!!'}  {c.topic:<{width}}  {c.value}" for c in checks]
    problems = [c for c in checks if not c.ok]
    lines.append("")
    if not problems:
        lines.append("No problems found.")
    for c in problems:
        lines.append(f"problem ({c.topic}): {c.problem}")
        if c.fix:
            lines.append(f"    fix: {c.fix}")
    return "\n".join(lines) + "\n"


def to_data(checks: list[Check]) -> list[dict[str, Any]]:
    return [
        {"topic": c.topic, "value": c.value, "ok": c.ok, "problem": c.problem, "fix": c.fix}
        for c in checks
    ]
