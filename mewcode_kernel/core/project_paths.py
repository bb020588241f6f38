"""The paths inside a project whose content is acted on later: one list.

The loaders read their sources from here (skills, agents, settings, hooks,
MCP servers), and the protections are derived from the same list: the
permission gate asks before a tool writes any of them and the OS sandbox
keeps them read-only (also while they do not exist yet), so a folder a
loader reads can never be missing from what is protected.
"""

from __future__ import annotations

__all__ = [
    "MEWCODE_STATE_PATHS",
    "PROJECT_AGENT_DIRS",
    "PROJECT_SETTINGS_FILES",
    "PROJECT_SKILL_PARENTS",
    "PROTECTED_PATHS",
    "RUN_LATER_PATHS",
    "WATCHED_PATHS",
]

#: ``<dir>/skills`` is read for skills in each of these
PROJECT_SKILL_PARENTS: tuple[str, ...] = (".mewcode", ".claude", ".agents")
#: agent definitions (subagents)
PROJECT_AGENT_DIRS: tuple[str, ...] = (".mewcode/agents", ".claude/agents")
#: settings a project can loosen things with, once trusted (see ``core.trust``)
PROJECT_SETTINGS_FILES: tuple[str, ...] = (
    ".mewcode.yaml",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".mewcode/settings.local.yaml",
    ".mewcode/hooks.yaml",
)
#: what other programs run later, outside any sandbox: git's hooks and
#: config (``core.fsmonitor``, aliases, filters), those of submodules and
#: linked worktrees (``git status`` enters submodules), and direnv's file
RUN_LATER_PATHS: tuple[str, ...] = (
    ".git/hooks",
    ".git/config",
    ".git/modules",
    ".git/worktrees",
    ".envrc",
)
#: what git reads that nothing may stand in for (git stops at any file or
#: folder there): ``commondir`` sends git to another folder's config and
#: hooks. A repository's own ``.git`` never has one; the OS sandbox removes
#: one that appears while a sandboxed process runs.
WATCHED_PATHS: tuple[str, ...] = (".git/commondir",)
#: what MewCode itself writes in a project while it runs: the sessions (logs,
#: checkpoints, task tables) and the MCP servers' logs. Never a turn's changes.
MEWCODE_STATE_PATHS: tuple[str, ...] = (".mewcode/sessions", ".mewcode/logs")

PROTECTED_PATHS: tuple[str, ...] = tuple(
    dict.fromkeys(
        [
            *RUN_LATER_PATHS,
            *PROJECT_SETTINGS_FILES,
            *(f"{d}/skills" for d in PROJECT_SKILL_PARENTS),
            *PROJECT_AGENT_DIRS,
            ".claude",
        ]
    )
)
"""Paths below the root a sandboxed process may read but never create or
change, and tools write only after asking."""
