"""``Skill``: one parsed ``SKILL.md`` and where it was found.

Skills are immutable values: the catalog hands the same object to every
reader, and loading a skill again (to pick up edits) makes a new one, so no
reader ever sees another's change half-made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = ["FORK_CONTEXTS", "MODES", "ForkContext", "InstallRecord", "Skill", "SkillMode", "Source"]

SkillMode = Literal["inline", "fork"]
"""``inline``: the skill's instructions join the conversation; ``fork``: the
skill runs as a subagent and only its answer comes back."""

ForkContext = Literal["none", "recent", "full"]
"""What a fork skill's subagent sees of the conversation that started it:
nothing but the skill, the last turns, or the whole live history."""

MODES: tuple[SkillMode, ...] = ("inline", "fork")
FORK_CONTEXTS: tuple[ForkContext, ...] = ("none", "recent", "full")

Source = Literal["user", "project"]


@dataclass(frozen=True, kw_only=True, slots=True)
class InstallRecord:
    """Where an installed skill came from (``install_skill`` writes it beside
    the skill's files): the URL it was asked for, the content hash of what was
    installed (``sha256`` over every file's path and bytes) and the file count."""

    url: str
    sha256: str
    files: int
    installed_at: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Skill:
    """One skill.

    * ``name`` (lower-case; how ``load_skill`` and ``/name`` find it),
      ``description`` (what the system prompt lists), ``body`` (the
      instructions, as read when the skill was parsed);
    * ``allowed_tools``: the tools the skill means to use, as written
      (``Read``, ``Bash(git add:*)``, ``read_file``); empty means no limit;
    * ``mode``, ``fork_context``, ``model``: how a fork skill runs;
    * ``model_invocable`` (``disable-model-invocation: true`` turns it off:
      only the person may run it) and ``user_invocable`` (``user-invocable:
      false``: only the model may load it), ``argument_hint``;
    * ``path`` (its ``SKILL.md``), ``source`` (user or project) and
      ``origin`` (the skills folder as people write it, e.g.
      ``.claude/skills``); ``warnings`` from parsing; ``install`` for a skill
      that ``install_skill`` put there.
    """

    name: str
    description: str = ""
    body: str = ""
    allowed_tools: tuple[str, ...] = ()
    mode: SkillMode = "inline"
    fork_context: ForkContext = "none"
    model: str | None = None
    model_invocable: bool = True
    user_invocable: bool = True
    argument_hint: str = ""
    path: Path = field(default_factory=Path)
    source: Source = "project"
    origin: str = ""
    warnings: tuple[str, ...] = ()
    install: InstallRecord | None = None
    #: ``<plugin>:`` for a plugin's skill or command (its name carries it)
    prefix: str = ""
    #: read from a command file (``commands/<name>.md``), named after the file
    command: bool = False

    @property
    def directory(self) -> Path:
        """The folder holding ``SKILL.md`` and the skill's other files."""
        return self.path.parent

    @property
    def display_dir(self) -> str:
        """The skill's folder as the model and people are shown it: under the
        project root or ``~``, so it reads the same on every machine."""
        return f"{self.origin}/{self.directory.name}" if self.origin else str(self.directory)
