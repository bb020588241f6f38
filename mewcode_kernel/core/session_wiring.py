"""Opening a session: ``open_session`` wires config, trust, provider, MCP
servers and hooks into an ``AgentSession`` (the front door, in
``agent_session``), and leaves the user's personal setup out of an offline
demo replay.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from .agent.spec import DEFAULT_MAX_TURNS
from .agent_session import AgentSession
from .config import McpServerConfig, ResolvedConfig, load_config
from .config.providers import ENV_API_KEY
from .events import Notice
from .hooks import HookEngine
from .key_file import read_key_file, with_key_file
from .lifecycle import LifecycleDispatcher
from .locations import forwarding_hint, locate_root
from .mcp import McpToolset
from .notebook import NotebookAccess
from .permission import ApprovalHandler, Mode, PermissionGate
from .plugins import discover_plugins, plugin_servers
from .providers.factory import build_provider
from .tasks import TaskManager
from .tools import Toolset
from .trust import assess_project
from .userdirs import display_path, mewcode_home, prepare_home, user_home

__all__ = ["NO_KEY_UNDER_GATEWAY", "REPLAY_LEAVES_OUT", "open_session", "replay_home"]


def open_session(
    root: str | os.PathLike[str] | None = None,
    *,
    provider: str | None = None,
    model: str | None = None,
    approval_handler: ApprovalHandler | None = None,
    gate: PermissionGate | None = None,
    mode: Mode | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    record_to: str | os.PathLike[str] | None = None,
    replay_from: str | os.PathLike[str] | None = None,
    home: Path | None = None,
    env: dict[str, str] | None = None,
    hooks: LifecycleDispatcher | None = None,
    tasks: TaskManager | None = None,
    mcp: McpToolset | None = None,
    project_trusted: Callable[[], bool] | None = None,
    toolsets: Sequence[Toolset] = (),
    more_mcp_servers: Mapping[str, McpServerConfig] | None = None,
    notebooks: NotebookAccess | None = None,
) -> AgentSession:
    """An ``AgentSession`` for the project at ``root`` with the configured provider.

    MCP servers from the config start when the session is entered (``async
    with``); ``mcp`` instead shares another session's servers.
    ``project_trusted`` decides whether the project's own servers may start
    (default: the project's trust, ``session.safety.trust``); stdio servers
    run in the session's OS sandbox. ``toolsets``: tools only the front end
    can offer (a notebook kernel's), joined after the built-ins; ``notebooks``:
    how the front end reaches the notebooks it has open (revert restores
    their cells there). ``more_mcp_servers``: servers a front end adds to the
    configured ones (an ACP client's); a configured server keeps its name, and
    each added one starts only as its ``scope`` and ``trust_item`` allow.

    The project is ``MEWCODE_ROOT``, else ``root``, else ``KERNEL_WORKING_DIR``,
    else the working directory (``locations.locate_root``). The user's
    MewCode folder must be theirs alone (``userdirs.prepare_home``), and
    ``keys.env`` in it fills the provider keys the environment lacks.

    Raises ``ConfigError`` when the selected provider cannot be used (unknown
    name, missing variable), when ``MEWCODE_ROOT`` names no folder, or when
    the MewCode folder or its key file is not the user's alone; problems in
    config files become warnings.
    """
    located = locate_root(root)
    root_path = located.path
    prepare_home(home)
    base_env = os.environ if env is None else env
    keyed = with_key_file(base_env, read_key_file(home))
    trust = assess_project(root_path, home=home)
    config = load_config(root_path, home=home, env=keyed, trust=trust)
    if more_mcp_servers:
        config = replace(config, mcp_servers={**more_mcp_servers, **config.mcp_servers})
    plugins = discover_plugins(root_path, home=home)
    if plugins.plugins:  # a configured server keeps its name
        added = plugin_servers(plugins, keyed)
        config = replace(config, mcp_servers={**added, **config.mcp_servers})
    settings = config.select_provider(provider, model)
    built = build_provider(settings, record_to=record_to, replay_from=replay_from)
    personal, left_out = home, []
    if settings.is_offline and replay_from is None:
        # The offline replay (no key set) plays a recording made without anyone's
        # personal setup: the user's own skills, agents, hooks, instructions,
        # memory and MCP servers would change every request and break it.
        personal = replay_home()
        left_out = _personal_setup(home, config)
        config = _without_user_servers(config)
    servers = mcp or _mcp_servers(root_path, config, base_env, project_trusted)
    session = AgentSession(
        root_path,
        config=config,
        provider=built,
        settings=settings,
        gate=gate,
        mode=mode,
        approval_handler=approval_handler,
        max_turns=max_turns,
        home=home,
        hooks=hooks,
        tasks=tasks,
        trust=trust,
        env=keyed if keyed is not base_env else env,
        mcp=servers,
        owns_mcp=mcp is None,
        toolsets=toolsets,
        extensions_home=personal,
        notebooks=notebooks,
    )
    if left_out:
        session.notify(
            Notice(level="info", message=REPLAY_LEAVES_OUT.format(what=", ".join(left_out)))
        )
    for problem in [*located.problems, *plugins.problems]:
        session.notify(Notice(level="warning", message=problem))
    if settings.is_offline and replay_from is None:
        hint = forwarding_hint(ENV_API_KEY.values(), keyed)
        if hint:  # a key left behind by the gateway: say so rather than replay in silence
            session.notify(Notice(level="warning", message=NO_KEY_UNDER_GATEWAY.format(hint=hint)))
    if hooks is None:
        session.use_hooks(
            HookEngine(
                root_path,
                home=personal,
                sandbox=lambda: session.safety.sandbox,
                child_env=lambda: session.safety.child_env,
                redact=lambda text: session.safety.redactor.redact(text),
                tools=lambda name: session.tools.get(name),
                workspace=lambda: session.workspace,
            )
        )
    if mcp is None and servers is not None:
        # this session's servers: confined by its sandbox, trusted with its project
        servers.sandbox_wrap = session.safety.sandbox.wrap
        servers.sandbox = session.safety.sandbox
        servers.child_env = session.safety.child_env
        # OAuth tokens live in the user's MewCode folder, known to the redactor
        servers.logins.home = mewcode_home(home)
        servers.logins.redactor = session.safety.redactor
        # a server's request for input goes to whoever answers the running cell's asks
        servers.elicitations.current = lambda: session.approvals.elicit
        if project_trusted is None:
            # read at each start: a /trust given later, or MEWCODE_TRUST_PROJECT set
            # in the notebook after the session opened, counts; each project server
            # starts only while the trust allows that very entry
            servers.project_trusted = session.safety.trusted_now
            servers.server_trusted = lambda server: (
                session.safety.allows(server.trust_item)
                if server.trust_item is not None
                else session.safety.trusted_now()
            )
    return session


NO_KEY_UNDER_GATEWAY = (
    "No provider key reached this kernel, so the offline demo recording plays: {hint}."
)
REPLAY_LEAVES_OUT = (
    "The offline replay leaves out your own {what}: the recording was made without them. "
    "With a model configured, they are used."
)
# (in the user's MewCode folder, or else in the home folder)
_PERSONAL = (
    ("skills", None),
    (None, ".claude/skills"),
    ("agents", None),
    (None, ".claude/agents"),
    ("hooks.yaml", None),
    ("MEWCODE.md", None),
    ("MEMORY.md", None),
)


def _personal_setup(home: Path | None, config: ResolvedConfig) -> list[str]:
    """What of the user's own setup an offline replay leaves out, as ``~/...``."""
    state, base = mewcode_home(home), user_home(home)
    candidates = [
        state / mine if mine is not None and state is not None else base / theirs
        for mine, theirs in _PERSONAL
        if (mine is not None and state is not None) or (theirs is not None and base is not None)
    ]
    found = [display_path(p, home) for p in candidates if p.exists()]
    servers = sorted(n for n, s in config.mcp_servers.items() if s.scope == "user" or s.shadows)
    if servers:
        found.append("MCP servers (" + ", ".join(servers) + ")")
    return found


_replay_home: Path | None = None


def replay_home() -> Path:
    """An empty folder of this process's own, standing for the home folder of
    an offline replay (made once, removed at exit)."""
    global _replay_home
    if _replay_home is None:
        _replay_home = Path(tempfile.mkdtemp(prefix="mewcode-replay-home-"))
        atexit.register(shutil.rmtree, _replay_home, True)
    return _replay_home


def _without_user_servers(config: ResolvedConfig) -> ResolvedConfig:
    servers = {
        name: replace(server, shadows=None)
        for name, server in config.mcp_servers.items()
        if server.scope != "user"
    }
    return replace(config, mcp_servers=servers)


def _mcp_servers(
    root: Path,
    config: ResolvedConfig,
    env: Mapping[str, str] | None,
    project_trusted: Callable[[], bool] | None,
) -> McpToolset | None:
    if not config.mcp_servers:
        return None
    return McpToolset(
        config.mcp_servers,
        root=root,
        env=os.environ if env is None else env,
        allowlist=config.mcp_env_allowlist,
        project_trusted=project_trusted,
    )
