"""The checks ``/doctor`` and ``python -m mewcode_kernel doctor`` run: where
things are and how they were chosen, what reached this kernel, and what
stands in the way, each problem with its fix. Names only, never values: a
key is reported as present, never shown.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ResolvedConfig
from ..config.providers import ENV_API_KEY, ENV_BASE_URL
from ..errors import ConfigError
from ..key_file import KEY_FILE, read_key_file
from ..locations import (
    KERNEL_WORKING_DIR,
    NOTEBOOK_ENV,
    forwarding_hint,
    gateway_evidence,
    locate_root,
    notebook_path,
)
from ..ownership import is_mine, owner_name, unsafe_sharing
from ..sandbox.detect import detect, user_namespaces
from ..session import SESSIONS_DIR
from ..telemetry import doctor_line
from ..userdirs import MEWCODE_HOME_ENV, home_problems, mewcode_home

__all__ = ["Check", "DoctorInputs", "McpRow"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Check:
    """One line of the report: ``topic``, what was found (``value``), and when
    something is wrong, ``problem`` and ``fix``."""

    topic: str
    value: str
    problem: str | None = None
    fix: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True, kw_only=True, slots=True)
class McpRow:
    """An MCP server as the report shows it."""

    name: str
    where: str
    state: str
    problem: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class DoctorInputs:
    """What the checks look at. ``root``: the session's project (``None``:
    found as a new kernel would); ``sandbox``: a live session's ``(state,
    reason)``; ``mcp``: its servers (``None``: not started here)."""

    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    home: Path | None = None
    root: Path | None = None
    config: ResolvedConfig | None = None
    config_error: str | None = None
    trust_state: str | None = None
    sandbox: tuple[str, str] | None = None
    mcp: Sequence[McpRow] | None = None


def check_user(inputs: DoctorInputs) -> list[Check]:
    uid = os.geteuid()
    return [Check(topic="user", value=f"{owner_name(uid)} (uid {uid})")]


def check_root(inputs: DoctorInputs) -> list[Check]:
    try:
        located = locate_root(env=inputs.env)
    except ConfigError as exc:
        return [
            Check(
                topic="project root",
                value=str(inputs.root or "none"),
                problem=str(exc),
                fix="set MEWCODE_ROOT to the project's folder, or unset it",
            )
        ]
    if inputs.root is None or inputs.root == located.path:
        value = f"{located.path} (from {located.source})"
    else:
        value = f"{inputs.root} (chosen by the front end or caller)"
    checks = [Check(topic="project root", value=value)]
    checks += [
        Check(
            topic="project root",
            value=f"{KERNEL_WORKING_DIR} passed over",
            problem=problem.split(", so ")[0],
            fix=problem.split(": ", 1)[-1] if ": " in problem else None,
        )
        for problem in located.problems
    ]
    return checks


def check_notebook(inputs: DoctorInputs) -> list[Check]:
    found = notebook_path(inputs.root, inputs.env)
    if found is not None:
        here = "" if found.exists() else " (not on this machine's file system)"
        return [Check(topic="notebook", value=f"{found}{here} (from {NOTEBOOK_ENV})")]
    if gateway_evidence(inputs.env) is not None:
        return [
            Check(
                topic="notebook",
                value=f"unknown: {NOTEBOOK_ENV} did not reach this kernel",
                problem="the gateway did not pass the notebook's name, so per-notebook "
                "defaults (the notebook tools, the session note) fall back to the project",
                fix=forwarding_hint([NOTEBOOK_ENV], inputs.env),
            )
        ]
    return [
        Check(
            topic="notebook",
            value=f"none ({NOTEBOOK_ENV} is not set: not started by Jupyter Server for a notebook)",
        )
    ]


def check_home(inputs: DoctorInputs) -> list[Check]:
    state = mewcode_home(inputs.home, inputs.env)
    if state is None:
        return [
            Check(
                topic="MewCode folder",
                value="none",
                problem="there is no home folder and MEWCODE_HOME is not set",
                fix=f"set {MEWCODE_HOME_ENV} to a folder of yours",
            )
        ]
    chosen = inputs.home is None and inputs.env.get(MEWCODE_HOME_ENV, "").strip()
    value = f"{state} (from {MEWCODE_HOME_ENV if chosen else '~/.mewcode'})"
    checks: list[Check] = []
    problems = home_problems(inputs.home, inputs.env)
    if problems:
        checks.append(
            Check(
                topic="MewCode folder",
                value=value,
                problem="; ".join(problems),
                fix=f"remove what others put there, or set {MEWCODE_HOME_ENV} to a folder only "
                "you can write",
            )
        )
    else:
        try:
            mode = stat.S_IMODE(os.stat(state).st_mode)
        except OSError:
            value += ", not created yet (it will be, mode 700)"
        else:
            value += f", mode {mode:03o}"
            if mode & 0o077:
                checks.append(
                    Check(
                        topic="MewCode folder",
                        value=value,
                        problem="other users can enter it",
                        fix=f"chmod 700 {state} (MewCode narrows it when a session opens)",
                    )
                )
        if not checks:
            checks.append(Check(topic="MewCode folder", value=value))
    if not chosen and gateway_evidence(inputs.env) and not inputs.env.get("HOME"):
        checks.append(
            Check(
                topic="MewCode folder",
                value="HOME is not set in this kernel",
                problem="the gateway passed no HOME, so the folder is the account's home from "
                "the password database, which a remote kernel may not keep",
                fix=f"set {MEWCODE_HOME_ENV} (or HOME) in the kernelspec's env, or pass it with "
                "EG_INHERITED_ENVS",
            )
        )
    return checks


def check_keys(inputs: DoctorInputs) -> list[Check]:
    names = [*ENV_API_KEY.values(), *ENV_BASE_URL.values()]
    checks: list[Check] = []
    try:
        keys = read_key_file(inputs.home, inputs.env)
    except ConfigError as exc:
        keys = None
        checks.append(
            Check(
                topic="key file",
                value=f"{KEY_FILE} in the MewCode folder",
                problem=str(exc),
                fix="chmod 600 it, or move the keys into the environment",
            )
        )
    from_file = set(keys.values) if keys is not None else set()
    seen = []
    for name in names:
        if inputs.env.get(name):
            seen.append(f"{name} (environment)")
        elif name in from_file:
            seen.append(f"{name} ({KEY_FILE})")
    extra = sorted(from_file - set(names))
    seen += [f"{name} ({KEY_FILE})" for name in extra]
    checks.insert(0, Check(topic="provider keys", value=", ".join(seen) or "none visible"))
    if keys is not None and keys.ignored:
        checks.append(
            Check(
                topic="key file",
                value=f"{keys.path}",
                problem="names that are no secret's are ignored: " + ", ".join(keys.ignored),
                fix="set other settings in the environment or in config.yaml",
            )
        )
    checks += _provider(inputs)
    return checks


def _provider(inputs: DoctorInputs) -> list[Check]:
    if inputs.config_error is not None:
        return [
            Check(
                topic="provider",
                value="config could not be read",
                problem=inputs.config_error,
                fix="fix the file and line named",
            )
        ]
    if inputs.config is None:
        return []
    try:
        settings = inputs.config.select_provider()
    except ConfigError as exc:
        return [Check(topic="provider", value="unusable", problem=str(exc), fix=_key_fix(inputs))]
    value = f"{settings.name} ({settings.protocol}, model {settings.model})"
    if settings.problem:
        return [
            Check(topic="provider", value=value, problem=settings.problem, fix=_key_fix(inputs))
        ]
    if settings.is_offline:
        hint = forwarding_hint(ENV_API_KEY.values(), inputs.env)
        return [
            Check(
                topic="provider",
                value="the offline demo replay (no model configured)",
                problem="no provider key is visible, so only the recorded demo plays",
                fix=hint
                or "set ANTHROPIC_API_KEY or OPENAI_API_KEY, or add a provider to "
                f".mewcode.yaml; or put the key in {KEY_FILE} in your MewCode folder (mode 600)",
            )
        ]
    return [Check(topic="provider", value=value)]


def _key_fix(inputs: DoctorInputs) -> str:
    return forwarding_hint(ENV_API_KEY.values(), inputs.env) or (
        f"set the variable named, or put it in {KEY_FILE} in your MewCode folder (mode 600)"
    )


def check_sandbox(inputs: DoctorInputs) -> list[Check]:
    support = detect(inputs.env)
    allowed, why = user_namespaces()
    found = f"{support.bwrap} {support.version}".strip() if support.bwrap else "not found"
    value = f"bubblewrap {found}; user namespaces: {why}"
    state, reason = inputs.sandbox or (
        ("active", "bubblewrap starts") if support.available else ("unavailable", support.reason)
    )
    if state == "active":
        return [Check(topic="sandbox", value=f"active: {value}")]
    if state == "disabled":
        return [Check(topic="sandbox", value=f"off (sandbox.enabled: false): {value}")]
    fix = (
        "apt-get install bubblewrap"
        if support.bwrap is None
        else (why.split("(fix: ", 1)[-1].rstrip(")") if allowed is False else None)
    )
    return [
        Check(
            topic="sandbox",
            value=f"unavailable: {value}",
            problem=f"commands run unsandboxed: {reason}",
            fix=(fix + "; or " if fix else "")
            + "set sandbox.enabled: false to say so on purpose (only the permission checks "
            "then stand between commands and your files)",
        )
    ]


def check_trust(inputs: DoctorInputs) -> list[Check]:
    if inputs.trust_state is None:
        return []
    return [Check(topic="project trust", value=inputs.trust_state)]


def check_mcp(inputs: DoctorInputs) -> list[Check]:
    rows = inputs.mcp
    if rows is None and inputs.config is not None:
        rows = [
            McpRow(name=name, where=server.scope, state="not started by this check")
            for name, server in inputs.config.mcp_servers.items()
        ]
    if not rows:
        return [Check(topic="MCP servers", value="none configured")]
    return [
        Check(
            topic="MCP servers",
            value=f"{row.name} ({row.where}): {row.state}",
            problem=row.problem,
            fix="`/mcp` shows its log; `/mcp reconnect NAME` tries again" if row.problem else None,
        )
        for row in rows
    ]


def check_gateway(inputs: DoctorInputs) -> list[Check]:
    evidence = gateway_evidence(inputs.env)
    if evidence is None:
        return [Check(topic="gateway", value="none (started by a local Jupyter server or by hand)")]
    user = inputs.env.get("KERNEL_USERNAME")
    checks = [Check(topic="gateway", value=evidence + (f", for {user}" if user else ""))]
    if not inputs.env.get("PATH"):
        checks.append(
            Check(
                topic="gateway",
                value="PATH is not set in this kernel",
                problem="commands find only the system's default programs",
                fix="pass PATH with EG_INHERITED_ENVS, or set it in the kernelspec's env",
            )
        )
    return checks


def check_sessions(inputs: DoctorInputs) -> list[Check]:
    root = inputs.root
    if root is None:
        try:
            root = locate_root(env=inputs.env).path
        except ConfigError:
            return []
    folder = root / SESSIONS_DIR
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return [Check(topic="sessions", value=f"{folder} (none yet)")]
    others = sum(1 for e in entries if _foreign(e))
    value = f"{folder}" + (
        f" ({others} of other users here, never listed or opened)" if others else ""
    )
    problem = unsafe_sharing(folder) or unsafe_sharing(folder.parent)
    if problem is None:
        return [Check(topic="sessions", value=value)]
    head, _, fix = problem.partition(" (fix: ")
    return [Check(topic="sessions", value=value, problem=head, fix=fix.rstrip(")"))]


def _foreign(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False) and not is_mine(
            entry.stat(follow_symlinks=False)
        )
    except OSError:
        return False


def check_telemetry(inputs: DoctorInputs) -> list[Check]:
    """Whether OpenTelemetry export is on and what goes where (endpoints shown
    without credentials); on without the SDK installed is a problem."""
    settings = inputs.config.telemetry if inputs.config is not None else None
    line = doctor_line(settings, inputs.env).removeprefix("Telemetry: ")
    if line.startswith("on, but"):
        return [
            Check(
                topic="telemetry",
                value="on",
                problem=line.removeprefix("on, but ").partition(" (")[0],
                fix="pip install 'mewcode[otel]'",
            )
        ]
    return [Check(topic="telemetry", value=line)]
