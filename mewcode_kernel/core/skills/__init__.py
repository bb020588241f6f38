"""Skills: packaged instructions (a ``SKILL.md`` and its files) that the agent
loads only when a task needs them.

* ``parse``: ``SKILL.md`` frontmatter and body (``Skill`` values, ``skill``);
* ``catalog``: the five folders skills are read from (project first);
* ``render``: the system prompt's catalog, a skill's rendered instructions,
  the ``<active-skills>`` block carried on later turns;
* ``toolset``: ``load_skill`` and ``install_skill``, and the one place a
  skill runs (inline activation, or a fork through ``SkillForkRunner``);
* ``sources``, ``download``, ``install``: URLs, quotas and the atomic swap of
  ``install_skill``.
"""

from __future__ import annotations

from .catalog import INSTALL_RECORD, SKILL_FILE, SkillCatalog, SkillFolder, skill_folders
from .fork import FORK_UNAVAILABLE, ForkRequest, SkillForkRunner
from .install import Installed, content_hash, install
from .parse import parse_skill, split_allowed_tools, split_frontmatter
from .render import active_skills_block, catalog_section, render_body, resolve_tools
from .skill import FORK_CONTEXTS, MODES, ForkContext, InstallRecord, Skill, SkillMode, Source
from .sources import API_URL_ENV, RAW_URL_ENV, TIMEOUT_ENV, InstallSettings, parse_source
from .toolset import SkillRun, SkillsToolset

__all__ = [
    "API_URL_ENV",
    "FORK_CONTEXTS",
    "FORK_UNAVAILABLE",
    "INSTALL_RECORD",
    "MODES",
    "RAW_URL_ENV",
    "SKILL_FILE",
    "TIMEOUT_ENV",
    "ForkContext",
    "ForkRequest",
    "InstallRecord",
    "InstallSettings",
    "Installed",
    "Skill",
    "SkillCatalog",
    "SkillFolder",
    "SkillForkRunner",
    "SkillMode",
    "SkillRun",
    "SkillsToolset",
    "Source",
    "active_skills_block",
    "catalog_section",
    "content_hash",
    "install",
    "parse_skill",
    "parse_source",
    "render_body",
    "resolve_tools",
    "skill_folders",
    "split_allowed_tools",
    "split_frontmatter",
]
